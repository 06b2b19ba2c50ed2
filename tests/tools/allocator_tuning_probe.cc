// tests/tools/allocator_tuning_test.sh's subject: starts as kvsim does
// (tune_allocator_or_restart first), then says what it runs with, one fact per line:
//   possible <0|1>        whether the tuning can apply to this build at all
//   in_effect <tunable>   allocator_tuning_in_effect()
//   tunables <value>      GLIBC_TUNABLES as the process sees it ("-" when unset)
//   pid <n>               to show that a restart kept the process (exec, not fork)
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "tools/kvsim/allocator_tuning.h"

int main(int, char** argv) {
  kvsim::tools::tune_allocator_or_restart(argv);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::cout << "possible " << (kvsim::tools::allocator_tuning_possible() ? 1 : 0) << "\n"
            << "in_effect " << kvsim::tools::allocator_tuning_in_effect() << "\n"
            << "tunables " << (tunables != nullptr ? tunables : "-") << "\n"
            << "pid " << getpid() << "\n";
  return 0;
}
