#pragma once
// A trace file read back into what it takes to run it again: the trace itself, its scenario
// (parsed with the catalogue's rules) and its core variant. Every problem is an input_error
// with one line naming the file.
#include <filesystem>
#include <optional>

#include "core/variant.h"
#include "spec/scenario_spec.h"
#include "sim/trace.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {

struct loaded_trace {
  sim::trace trace;
  scenarios::scenario_spec spec;
  core::variant variant;

  // The setup that reruns it: same scenario, seed and fault profile, and the recorded variant
  // unless `core_variant` names another (kvsim check replays a historical bug's trace on the
  // fixed core).
  run_setup setup(std::string strategy_name,
                  std::optional<core::variant> core_variant = std::nullopt) const;
};

loaded_trace load_trace_file(const std::filesystem::path& path);

// Runs the trace's decisions again, strictly (a divergence is reported, not hidden), on the
// recorded variant or on `core_variant`.
run_report replay_strictly(const loaded_trace& loaded,
                           std::optional<core::variant> core_variant = std::nullopt);

// Whether two runs ended alike: both without a finding, or with the same invariant and message.
bool same_finding(const std::optional<sim::finding>& a, const std::optional<sim::finding>& b);

}  // namespace kvsim::tools
