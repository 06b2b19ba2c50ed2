#include "sim/fiber_stacks.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace kvsim::sim {

void unpoison_stack_region(void* bottom, std::size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(bottom, bytes);
#else
  (void)bottom;
  (void)bytes;
#endif
}

}  // namespace kvsim::sim
