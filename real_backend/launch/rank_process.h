#pragma once
// One rank of a transfer script as a process of its own (`kvsim real --data-plane host
// --ranks 2`): started by the parent (process_launch.h) with RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, the run's key in KVSIM_RUN_KEY, the shared data plane's fd and its step
// channel's fd. It attaches to the plane, builds the scenario's context there (the pages,
// gates and board are the parent's memory), links to the other rank over the authenticated
// TCP control plane (decode listens on MASTER_ADDR:MASTER_PORT, prefill connects), runs its
// actor on a rank thread of its own, and takes the script's steps from the channel until told
// to stop. Its findings go back to the parent, which merges both ranks' into one report.
#include <ostream>
#include <string>
#include <vector>

#include "core/variant.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/scripts/real_outcome.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// True when this process was started as a rank process (KVSIM_SCRIPT_FD is set).
bool started_as_rank_process(const environment& env);
// The fd number the parent handed down in variable `name`; launch_error unless it is one.
int inherited_fd(const environment& env, const char* name);

class data_plane;
class step_link;
class tcp_messenger;
struct run_secret;

// The decode rank's part of a transfer script, however the process was started: builds the
// scenario's context on `plane` (shared with rank 0's process), runs decode on a rank thread
// of its own over `wire` (already linked to prefill), says "ready" on `link`, and serves the
// script's steps from it (each parsed strictly, its index checked against the scenario) until
// told to stop and then to exit. Throws what ended it otherwise.
void serve_decode_rank(const scenarios::scenario_spec& spec, core::variant v,
                       data_plane& plane, const run_secret& secret, tcp_messenger& wire,
                       step_link& link);

// Runs the rank; returns the process's exit status (0; 3 when the run failed, said on the
// channel and on `err`).
// `cuda`: the pages on the GPU, opened by CUDA IPC (cuda_process_plane.h); else host memory.
int run_rank_process(const scenarios::scenario_spec& spec, core::variant v,
                     const environment& env, std::ostream& err, bool cuda = false);

// The findings as the channel carries them, and back.
std::string findings_to_json(const std::vector<real_finding>& findings);
std::vector<real_finding> findings_from_json(const std::string& text);
// A rank's recorded events (kvsim real --trace), likewise.
std::string events_to_json(const std::vector<recorded_event>& events);
std::vector<recorded_event> events_from_json(const std::string& text);

}  // namespace kvsim::real
