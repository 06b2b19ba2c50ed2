#pragma once
// `kvsim real --trace FILE`: a real run's event log written as a simulator trace
// (docs/trace-format.md), so that `kvsim replay --lenient` can turn it into a simulator run
// that reaches the same finding. The trace is marked "origin": "real": it holds the scenario
// (inline), the variant, every core event in the order the run logged them (stamped with host
// time since the run began) and the run's findings, but no decisions (a real run's schedule
// is the hardware's, not a list the simulator could replay strictly) and no faults (the run
// injected none besides the scenario's own script).
//
// Written as kvsim writes its traces: to FILE.tmp in the same directory, synced, renamed over
// FILE; checked before the run (check_recording_path), so a bad path costs no run.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "real_backend/scripts/real_outcome.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// One line naming the file and what is wrong.
class recording_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The trace document of `outcome`, a run of `spec`.
nlohmann::json recording_json(const scenarios::scenario_spec& spec, const real_outcome& outcome);

// Throws recording_error unless `path` can take a trace: not a directory, in a directory that
// exists and that we may write to.
void check_recording_path(const std::filesystem::path& path);

// Atomically, as above; recording_error on failure (the temporary file removed, an existing
// FILE left as it was).
void write_recording(const std::filesystem::path& path, const scenarios::scenario_spec& spec,
                     const real_outcome& outcome);

}  // namespace kvsim::real
