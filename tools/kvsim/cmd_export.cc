// kvsim export FILE --format perfetto|text -o OUT: a trace as a timeline. The trace's
// decisions are replayed strictly to regenerate the typed events, which sim/timeline_export
// turns into Chrome trace-event JSON (Perfetto, chrome://tracing) or a text timeline.
#include "spec/one_line.h"
#include "sim/timeline_export.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/explore_report.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {
namespace {

constexpr const char* export_help =
    "usage: kvsim export FILE --format perfetto|text -o OUT\n"
    "  perfetto  Chrome trace-event JSON (open in ui.perfetto.dev or chrome://tracing):\n"
    "            ts is virtual time in microseconds; a process per rank, a thread per\n"
    "            actor, an async slice per request, flow arrows for messages and\n"
    "            collectives, a track per page of the finding, the finding as a marker\n"
    "  text      a header (run, faults, finding, the scenario's requests), one line per\n"
    "            event (step, virtual time, actor, what happened; requests named by\n"
    "            their index, \"request 35 (room 4/gen 2)\"), then the finding, its\n"
    "            evidence and the history of every page it involves (docs/timelines.md)\n"
    "  The file is written atomically. exit: 0 written, 2 bad input\n";

// The trace's own header fields, which the timelines repeat at their top, and its scenario's
// requests, which the text timeline names by their index.
sim::timeline_run timeline_of(const loaded_trace& loaded, const run_report& report) {
  const sim::trace& t = loaded.trace;
  return {loaded.spec.name, t.variant,           t.strategy,
          t.checkers,       t.seed,              t.faults.describe(),
          t.decisions.size(), report.outcome.steps, sim::timeline_requests(loaded.spec)};
}

}  // namespace

int cmd_export(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}, {"--format", true}, {"-o", true}, {"--out", true}}, 1);
  if (flags.has("--help")) {
    out << export_help;
    return 0;
  }
  if (flags.positionals().empty()) throw usage_error("expected a trace FILE");
  const auto format = flags.value("--format");
  if (!format) throw usage_error("--format perfetto|text is required");
  if (*format != "perfetto" && *format != "text") {
    throw usage_error("unknown format '" + *format + "' (perfetto, text)");
  }
  const auto output = flags.has("-o") ? flags.value("-o") : flags.value("--out");
  if (!output) throw usage_error("-o OUT is required (- for standard output)");
  check_output_file("-o", *output);
  const std::string file = flags.positionals().front();
  const loaded_trace loaded = load_trace_file(file);
  const run_report report = replay_strictly(loaded);
  if (report.diverged) {
    throw input_error(spec::echoed(file) + ": the trace no longer replays (decision " +
                      std::to_string(report.diverged->decision_index) + ": recorded " +
                      spec::echoed(report.diverged->expected) + ", asked " +
                      spec::echoed(report.diverged->actual) + ")");
  }
  const sim::timeline_run run = timeline_of(loaded, report);
  const std::string text =
      *format == "perfetto"
          ? sim::chrome_trace(report.events, report.actors, report.found, run).dump() + "\n"
          : sim::text_timeline(run, report.events, report.actors, report.found);
  write_output(*output, text);
  if (is_stdout(*output)) return 0;  // standard output holds the export alone
  out << "wrote " << spec::echoed(*output) << " (" << *format << ", " << report.events.size() << " events, "
      << report.outcome.steps << " steps)\n";
  return 0;
}

}  // namespace kvsim::tools
