#pragma once
// `kvsim real --nccl-check`: every process of a launch (torchrun, srun, or one process alone)
// reads its place from the launcher's environment, gets the NCCL unique id from rank 0 over
// the TCP control plane, joins one communicator on its local device and runs all_reduce MIN
// and MAX of its rank and a barrier. Proves the multi-node plumbing with the cluster's own
// launcher before any scenario runs there.
#include <optional>
#include <ostream>
#include <string>

#include "real_backend/launch/launcher.h"

namespace kvsim::real {

// 0: the collectives agreed; 1: they disagreed; 2: usage, environment or no GPU; 3: a
// CUDA, NCCL or control-plane failure. Errors are one "kvsim real: ..." line on `err`.
// `key_file`: --key-file's value; without it a launch of several ranks takes the run's key
// from KVSIM_RUN_KEY (real_backend/wire/run_secret.h).
// `env`: the launcher's variables, the run's key among them (run_real_command takes it out of
// the process's environment first).
int run_nccl_check(std::ostream& out, std::ostream& err,
                   const std::optional<std::string>& key_file = std::nullopt,
                   const environment& env = process_environment());

}  // namespace kvsim::real
