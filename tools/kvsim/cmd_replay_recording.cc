// kvsim replay --lenient FILE, where FILE is a recording from real hardware (kvsim real
// --trace): the simulator's run steered by the recorded order of the core's decisions
// (recording_replay.h), and whether it reaches the recorded finding.
#include "spec/trace_format.h"
#include "tools/kvsim/cmd_replay_recording.h"

#include <cstdio>

#include "spec/one_line.h"
#include "sim/trace.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/recording_replay.h"
#include "tools/kvsim/run_json.h"

namespace kvsim::tools {
namespace {

}  // namespace

int replay_real_recording(const recording_request& request, std::ostream& out) {
  const loaded_trace& loaded = request.loaded;
  if (!request.lenient) {
    throw usage_error(request.path +
                      ": a recording from real hardware (origin \"real\") has no simulator "
                      "decisions to replay strictly: use --lenient");
  }
  if (request.trace_out) check_trace_output("--trace", *request.trace_out);
  const recording_replay replayed =
      replay_recording(loaded, request.core_variant, /*follow=*/true);
  const run_report& report = replayed.report;
  // The recorded invariant (or none). How closely the run kept to the recorded order is
  // reported beside it, not required: the simulator's actors and the real backend's script
  // make some of a rank's calls in another order (prefill's release after its drain-ACK).
  const bool matched = same_invariant(loaded.trace.found, report.found);
  if (request.trace_out) {
    try {
      sim::write_trace(*request.trace_out, report.trace);
    } catch (const sim::trace_error& e) {
      throw input_error(e.what());
    }
  }
  if (request.json) {
    nlohmann::json j = run_json(loaded.setup("replay-lenient", request.core_variant), report);
    j["mode"] = "lenient";
    j["origin"] = "real";
    j["recorded_finding"] = finding_json(loaded.trace.found);
    j["matched"] = matched;
    j["recorded_core_decisions"] = replayed.fit.recorded;
    j["agreed"] = replayed.fit.agreed;
    j["followed"] = replayed.fit.followed;
    j["own"] = replayed.fit.own;
    j["steering_runs"] = replayed.runs;
    j["steerings"] = replayed.attempts;
    j["within_budget"] = replayed.within_budget;
    out << j.dump() << "\n";
    return matched ? 0 : 1;
  }
  out << "lenient replay of a recording from real hardware: " << spec::echoed(loaded.spec.name)
      << " [" << spec::echoed(loaded.trace.variant)
      << (request.core_variant ? " run as " + request.core_variant->name() : std::string())
      << "], steered by its " << replayed.fit.recorded << " recorded core decisions ("
      << replayed.runs << " simulator runs, " << replayed.attempts
      << (replayed.attempts == 1 ? " steering" : " steerings")
      << (replayed.within_budget ? "" : ", budget spent")
      << "): " << report.outcome.steps << " steps, decision hash " << spec::hex16(report.decision_hash)
      << "\n"
      << "its core decisions: the first " << replayed.fit.agreed << " as recorded, "
      << replayed.fit.followed << " in the recorded order, " << replayed.fit.own
      << " of its own out of that order"
      << (report.found ? " (the simulator stops at its first finding)" : "") << "\n"
      << "recorded: "
      << (loaded.trace.found ? spec::echoed(loaded.trace.found->message, spec::message_chars_max)
                             : "no finding")
      << "\n"
      << "replayed: "
      << (report.found ? spec::echoed(report.found->message, spec::message_chars_max) : "no finding")
      << "\n"
      << (matched ? "the run came out as recorded (same invariant)"
                  : "the run did NOT come out as recorded")
      << "\n";
  return matched ? 0 : 1;
}

}  // namespace kvsim::tools
