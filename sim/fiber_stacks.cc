#include "sim/fiber_stacks.h"

#include <cstdlib>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "sim/sim_assert.h"

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

namespace {

// Runs one after another allocate and free the same few megabytes. With glibc's defaults a
// free that leaves more than 128 KiB at the top of the heap gives it back to the system and
// a block over 128 KiB (a big world's event log) is its own mapping, so every run paid page
// faults again for memory the previous run had just released (ranks32: ~200 faults a run;
// they once hid behind Boost's stack pool, whose 8 MiB blocks raised glibc's thresholds).
// Process-wide, but only how much freed memory glibc keeps for reuse: never what a run does.
void keep_the_heap_between_runs() {
#if defined(__GLIBC__)
  static const bool tuned = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    return true;
  }();
  (void)tuned;
#endif
}

}  // namespace

fiber_stacks::~fiber_stacks() {
  KVSIM_SIM_ASSERT(outstanding_ == 0, "a fiber stack was not handed back before its pool ended");
  for (char* bottom : kept_) std::free(bottom);
}

boost::context::stack_context fiber_stacks::allocate() {
  keep_the_heap_between_runs();
  // A kept stack first; else from the heap, which (tuned above) keeps what a world with its
  // own pool freed for the next one. The pool is the caller's, never global or thread-local
  // (the sim layer holds no such state).
  char* bottom = nullptr;
  if (!kept_.empty()) {
    bottom = kept_.back();
    kept_.pop_back();
  } else {
    bottom = static_cast<char*>(std::malloc(stack_bytes_));
    if (bottom == nullptr) throw std::bad_alloc();
  }
  ++outstanding_;
  boost::context::stack_context stack;
  stack.size = stack_bytes_;
  stack.sp = bottom + stack_bytes_;  // stacks grow down
  unpoison_stack_region(bottom, stack_bytes_);
  last_ = stack;
  return stack;
}

void fiber_stacks::deallocate(boost::context::stack_context& stack) noexcept {
  char* bottom = static_cast<char*>(stack.sp) - stack.size;
  KVSIM_SIM_ASSERT(stack.size == stack_bytes_, "a fiber stack came back to a pool of another size");
  unpoison_stack_region(bottom, stack.size);
  --outstanding_;
  // Kept, not freed. push_back may allocate (and throw) only when the list outgrows every
  // earlier run's; then the stack is freed instead, which loses nothing but the reuse.
  try {
    kept_.push_back(bottom);
  } catch (...) {
    std::free(bottom);
  }
}

}  // namespace kvsim::sim
