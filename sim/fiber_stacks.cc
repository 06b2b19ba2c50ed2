#include "sim/fiber_stacks.h"

#include <sys/mman.h>
#include <unistd.h>

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

// Runs one after another allocate and free the same few megabytes (event logs, books). With glibc's defaults a
// free that leaves more than 128 KiB at the top of the heap gives it back to the system and
// a block over 128 KiB (a big world's event log) is its own mapping, so every run paid page
// faults again for memory the previous run had just released (ranks32: ~200 faults a run;
// they once hid behind Boost's stack pool, whose 8 MiB blocks raised glibc's thresholds).
// The stacks themselves are mappings of their own (a guard page each), kept by the pool.
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

std::size_t fiber_stacks::guard_bytes() {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

fiber_stacks::fiber_stacks(std::size_t stack_bytes)
    : stack_bytes_(stack_bytes),
      mapping_bytes_(guard_bytes() + (stack_bytes + guard_bytes() - 1) / guard_bytes() * guard_bytes()) {}

fiber_stacks::~fiber_stacks() {
  KVSIM_SIM_ASSERT(outstanding_ == 0, "a fiber stack was not handed back before its pool ended");
  for (char* mapping : kept_) ::munmap(mapping, mapping_bytes_);
}

char* fiber_stacks::map_one() const {
  keep_the_heap_between_runs();
  void* mapping = ::mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  // The lowest page is the guard: a fiber that overflows its stack faults there (SIGSEGV at a
  // known address) instead of writing over whatever lies below it.
  if (::mprotect(mapping, guard_bytes(), PROT_NONE) != 0) {
    ::munmap(mapping, mapping_bytes_);
    throw std::bad_alloc();
  }
  return static_cast<char*>(mapping);
}

void fiber_stacks::reserve(std::size_t stacks) {
  if (kept_.size() >= stacks) return;
  kept_.reserve(stacks);  // before any mapping: push_back below cannot throw then
  while (kept_.size() < stacks) kept_.push_back(map_one());
}

boost::context::stack_context fiber_stacks::allocate() {
  // A kept stack first; else a fresh mapping. The pool is the caller's, never global or
  // thread-local (the sim layer holds no such state).
  char* mapping = nullptr;
  if (!kept_.empty()) {
    mapping = kept_.back();
    kept_.pop_back();
  } else {
    mapping = map_one();
  }
  ++outstanding_;
  boost::context::stack_context stack;
  stack.size = stack_bytes_;
  stack.sp = mapping + mapping_bytes_;  // stacks grow down, towards the guard
  unpoison_stack_region(static_cast<char*>(stack.sp) - stack_bytes_, stack_bytes_);
  last_ = stack;
  return stack;
}

void fiber_stacks::deallocate(boost::context::stack_context& stack) noexcept {
  KVSIM_SIM_ASSERT(stack.size == stack_bytes_, "a fiber stack came back to a pool of another size");
  char* mapping = static_cast<char*>(stack.sp) - mapping_bytes_;
  unpoison_stack_region(static_cast<char*>(stack.sp) - stack.size, stack.size);
  --outstanding_;
  // Kept, guard and all, not unmapped. push_back may allocate (and throw) only when the list
  // outgrows every earlier run's; then the stack is unmapped instead, which loses nothing but
  // the reuse.
  try {
    kept_.push_back(mapping);
  } catch (...) {
    ::munmap(mapping, mapping_bytes_);
  }
}

}  // namespace kvsim::sim
