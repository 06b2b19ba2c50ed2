#pragma once
// A trace file read back into what it takes to run it again: the trace itself, its scenario
// (parsed with the catalogue's rules) and its core variant. Every problem is an input_error
// with one line naming the file.
#include <filesystem>

#include "core/variant.h"
#include "scenarios/scenario_spec.h"
#include "sim/trace.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {

struct loaded_trace {
  sim::trace trace;
  scenarios::scenario_spec spec;
  core::variant variant;

  // The setup that reruns it: same scenario, variant, seed and fault profile.
  run_setup setup(std::string strategy_name) const;
};

loaded_trace load_trace_file(const std::filesystem::path& path);

// Runs the trace's decisions again, strictly (a divergence is reported, not hidden).
run_report replay_strictly(const loaded_trace& loaded);

}  // namespace kvsim::tools
