#pragma once
// `kvsim real --scenario S --variant V --data-plane host --launched`: one rank of a transfer
// scenario, started by torchrun or srun like any other job's process (launcher.h reads RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT, or SLURM_PROCID and SLURM_NTASKS with MASTER_ADDR and
// MASTER_PORT exported by the batch script). No kvsim parent hands the ranks a socketpair, a
// memfd or a key, so:
//   - the run's key is KVSIM_RUN_KEY or --key-file, the same on both ranks (run_secret.h);
//   - rank 0 (prefill) takes the parent's role: it creates the shared memory as a named object
//     (launched_region.h), listens at MASTER_ADDR on the rendezvous port (launcher.h: under
//     torchrun MASTER_PORT + 1, its own store holds MASTER_PORT), authenticates rank 1 at the
//     hello, tells it where the memory is, runs the script (prefill on a rank thread of its
//     own, decode's steps as step frames over the sealed link: control_step_link.h), collects
//     rank 1's findings and events, and returns the run's outcome, the report `--ranks 2`
//     prints;
//   - rank 1 (decode) connects, opens the memory rank 0 named, and serves its steps with the
//     code a parent-launched decode process runs (rank_process.h's serve_decode_rank); it
//     returns nothing when its part went as scripted.
// Both ranks run on one machine (the host data plane is shared memory); ranks on several
// machines need the CUDA plane's RDMA path, which is not built.
#include <optional>
#include <string>

#include "core/variant.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/scripts/real_outcome.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/transfer_script.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// This process's place in the launch, refused (launch_error, one line) unless it is one of
// exactly 2 ranks started by torchrun or srun with MASTER_ADDR and MASTER_PORT set.
launch_config launched_rank_config(const environment& env);

// Runs this rank. Rank 0: the run's outcome, both ranks' findings merged; rank 1: nullopt.
// Throws launch_error or link_refused when the launch is refused (the memory exists already,
// the peer does not prove the key), real_backend_error when the run failed.
std::optional<real_outcome> run_launched_rank(const scenarios::scenario_spec& spec, core::variant v,
                                              const std::string& variant_name,
                                              const launch_config& launch, const run_secret& secret,
                                              const script_options& options = {});

}  // namespace kvsim::real
