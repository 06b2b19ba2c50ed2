#pragma once
// What the timeline export promises, as checks a test runs on its outputs (each shown to fire
// on hand-broken outputs in timeline_export_test.cc): trace_problems for the Chrome trace JSON,
// text_problems for the text timeline. Each returns one line per problem; none: the output
// keeps every promise.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/sim_events.h"
#include "sim/timeline_export.h"

namespace kvsim::sim::timeline_checks {

// What the Trace Event Format asks of each phase this export uses, and what Perfetto needs to
// draw it: B/E matched and nested per thread (with the X slices), async b/e matched per
// (cat, id), flow ends after their starts and inside a slice of their thread, per-thread time
// never going back, and a name for every process and thread.
std::vector<std::string> trace_problems(const nlohmann::json& trace);

// What the text timeline promises: its header (the run, the time unit, the finding in one
// line), no line over the cap, every event on a line of its own in log order with its step
// and virtual time, every step 0..steps accounted for (an event's line or a summary of quiet
// steps), no transfer by its packed 64-bit id (rank 1's transfer 3 is 4294967299), and the
// finding's section: the finding, each piece of evidence, and each page it involves; where
// the run's requests are known (run.requests), a legend line for each, and every mention of
// one named by its index (no bare "room R/gen G" of a known request); where none are, no legend.
std::vector<std::string> text_problems(const std::string& text, const std::vector<sim_event>& events,
                                       const timeline_run& run, const std::optional<finding>& found);

std::vector<std::string> lines_of(const std::string& text);
std::string joined(const std::vector<std::string>& lines);

}  // namespace kvsim::sim::timeline_checks
