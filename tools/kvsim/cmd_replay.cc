// kvsim replay FILE [--strict | --lenient] [--json]: runs a trace's decisions again and says
// whether the run came out as recorded.
#include "spec/one_line.h"
#include "sim/search/random_walk.h"
#include "sim/search/replay.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/cmd_replay_recording.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/recording_replay.h"
#include "tools/kvsim/run_json.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {
namespace {

constexpr const char* replay_help =
    "usage: kvsim replay FILE [--strict | --lenient] [--variant V] [--json] [--trace OUT]\n"
    "  Re-runs a trace: same scenario, variant, seed and fault profile, its decisions.\n"
    "  --strict   (default) every decision must fit the recording; the first that does not\n"
    "             is reported (index, expected, actual)\n"
    "  --lenient  replay the prefix that fits, then continue with a random walk from the\n"
    "             trace's seed\n"
    "  --variant  run another core variant than the recorded one (safe or B1..B12,\n"
    "             H1..H3): a historical bug's trace replayed on the fixed core, as\n"
    "             kvsim check does\n"
    "  A recording from real hardware (kvsim real --trace, \"origin\": \"real\") has no\n"
    "  decisions: --lenient steers the simulator by the recorded order of the core's\n"
    "  decisions (a seeded walk where it says nothing) to the recorded finding's invariant;\n"
    "  --trace OUT writes that run as a simulator trace, which replays strictly\n"
    "  exit: 0 the run came out as recorded (same finding, or none), 1 it did not, 2 bad input\n";

}  // namespace

int cmd_replay(const arguments& args, std::ostream& out) {
  const cli_args flags(
      args,
      {{"--help"}, {"--strict"}, {"--lenient"}, {"--json"}, {"--variant", true}, {"--trace", true}},
      1);
  if (flags.has("--help")) {
    out << replay_help;
    return 0;
  }
  if (flags.positionals().empty()) throw usage_error("expected a trace FILE");
  if (flags.has("--strict") && flags.has("--lenient")) {
    throw usage_error("give at most one of --strict and --lenient");
  }
  const bool lenient = flags.has("--lenient");
  const std::optional<core::variant> core_variant =
      flags.has("--variant") ? std::optional(parse_variant(*flags.value("--variant")))
                             : std::nullopt;
  const loaded_trace loaded = load_trace_file(flags.positionals().front());
  // The loader read "origin" with the rest: the file is read once, within its cap.
  if (loaded.trace.origin == "real") {
    return replay_real_recording({flags.positionals().front(), loaded, lenient, flags.has("--json"),
                                  core_variant, flags.value("--trace")},
                                 out);
  }
  if (flags.has("--trace")) throw usage_error("--trace goes with a recording from real hardware");
  sim::replay chooser(loaded.trace.decisions,
                      lenient ? sim::replay_mode::lenient : sim::replay_mode::strict,
                      lenient ? std::make_unique<sim::random_walk>(loaded.trace.seed) : nullptr);
  const run_setup setup = loaded.setup(lenient ? "replay-lenient" : "replay", core_variant);
  const run_report report = run_once(setup, chooser);
  const bool diverged = report.diverged.has_value();
  const bool matched = !diverged && same_finding(report.found, loaded.trace.found) &&
                       (lenient || report.decisions == loaded.trace.decisions);
  if (flags.has("--json")) {
    nlohmann::json j = run_json(setup, report);
    j["mode"] = lenient ? "lenient" : "strict";
    j["recorded_finding"] = finding_json(loaded.trace.found);
    j["matched"] = matched;
    j["replayed"] = chooser.replayed();
    j["divergence"] = nullptr;
    if (report.diverged) {
      j["divergence"] = {{"decision_index", report.diverged->decision_index},
                         {"expected", report.diverged->expected},
                         {"actual", report.diverged->actual}};
    }
    out << j.dump() << "\n";
    return matched ? 0 : 1;
  }
  // Every value from the trace is echoed (escaped, cut short): a trace's text cannot add a
  // line of its own, such as a false "came out as recorded".
  out << (lenient ? "lenient" : "strict") << " replay of " << spec::echoed(loaded.spec.name) << " ["
      << spec::echoed(loaded.trace.variant)
      << (core_variant ? " run as " + core_variant->name() : std::string()) << ", "
      << spec::echoed(loaded.trace.strategy) << ", seed " << loaded.trace.seed
      << "]: " << chooser.replayed() << " of " << loaded.trace.decisions.size()
      << " recorded decisions replayed, " << report.outcome.steps << " steps\n";
  if (report.diverged) {
    out << "diverged at decision " << report.diverged->decision_index << ": recorded "
        << spec::echoed(report.diverged->expected) << ", the run asked for "
        << spec::echoed(report.diverged->actual) << "\n";
  }
  out << "recorded: "
      << (loaded.trace.found ? spec::echoed(loaded.trace.found->message, spec::message_chars_max)
                             : std::string("no finding"))
      << "\nreplayed: "
      << (report.found ? spec::echoed(report.found->message, spec::message_chars_max)
                       : std::string("no finding"))
      << "\n"
      << (matched ? "the run came out as recorded" : "the run did NOT come out as recorded") << "\n";
  return matched ? 0 : 1;
}

}  // namespace kvsim::tools
