#include "sim/fiber_stacks.h"

// GCC defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang says so through
// __has_feature(address_sanitizer) only.
#if defined(__SANITIZE_ADDRESS__)
#define KVSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVSIM_ASAN 1
#endif
#endif

#if defined(KVSIM_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace kvsim::sim {

void unpoison_stack_region(void* bottom, std::size_t bytes) {
#if defined(KVSIM_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(bottom, bytes);
#else
  (void)bottom;
  (void)bytes;
#endif
}

}  // namespace kvsim::sim
