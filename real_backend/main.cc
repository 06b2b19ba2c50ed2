// kvsim_real: `kvsim real` as a program of its own (build/bin/kvsim_real), so that the GPU
// check runs whether or not the kvsim command was built with the real backend.
#include <iostream>
#include <string>
#include <vector>

#include "real_backend/real_command.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return kvsim::real::run_real_command(args, std::cout, std::cerr);
}
