#pragma once
// `kvsim real`: runs a scripted catalogue scenario on the GPU(s) with the production core and
// reports it in the simulator's finding format.
//
//   kvsim real --scenario NAME [--variant V] [--json] [--trace FILE] [--catalogue FILE]
//   kvsim real --list [--catalogue FILE]     the scenarios the real backend scripts
//   kvsim real --nccl-check                  multi-process NCCL check (torchrun / srun)
//   kvsim real --help
//
// `args` are the arguments after "real". Exit status: 0 no finding, 1 a finding, 2 a usage
// error, an unknown or unscripted scenario, or no GPU (one "kvsim real: ..." line on `err`,
// nothing on `out`), 3 a CUDA, NCCL or control-plane failure during the run.
#include <ostream>
#include <string>
#include <vector>

namespace kvsim::real {

int run_real_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kvsim::real
