#include "sim/fiber_stacks.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <vector>

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

// This thread's spare stacks, by size. Bounded, so that one huge world (caps allow 16,384
// transfer actors) does not pin its stacks for the rest of the process.
class stack_cache {
 public:
  static constexpr std::size_t spare_bytes_max = std::size_t{64} << 20;

  stack_cache() { keep_the_heap_between_runs(); }
  stack_cache(const stack_cache&) = delete;
  stack_cache& operator=(const stack_cache&) = delete;
  ~stack_cache() {
    for (auto& [bytes, stacks] : spares_) {
      for (void* bottom : stacks) std::free(bottom);
    }
  }

  void* take(std::size_t bytes) {
    std::vector<void*>& stacks = spares_[bytes];
    if (stacks.empty()) {
      void* bottom = std::malloc(bytes);
      if (bottom == nullptr) throw std::bad_alloc();
      return bottom;
    }
    void* bottom = stacks.back();
    stacks.pop_back();
    spare_bytes_ -= bytes;
    return bottom;
  }

  void give_back(void* bottom, std::size_t bytes) noexcept {
    std::vector<void*>& stacks = spares_[bytes];
    if (spare_bytes_ + bytes > spare_bytes_max || stacks.size() == stacks.capacity()) {
      // Full, or keeping it would allocate (a noexcept path): free it instead. Capacity
      // grows in take() below, where an allocation may throw.
      std::free(bottom);
      return;
    }
    stacks.push_back(bottom);
    spare_bytes_ += bytes;
  }

  // Room for every stack handed out to come back without the vector allocating.
  void reserve_for(std::size_t bytes, std::size_t handed_out) {
    std::vector<void*>& stacks = spares_[bytes];
    const std::size_t cap = spare_bytes_max / bytes;
    stacks.reserve(std::min(cap, stacks.size() + handed_out));
  }

 private:
  std::map<std::size_t, std::vector<void*>> spares_;
  std::size_t spare_bytes_ = 0;
};

stack_cache& this_threads_stacks() {
  thread_local stack_cache cache;
  return cache;
}

}  // namespace

fiber_stacks::~fiber_stacks() {
  KVSIM_SIM_ASSERT(outstanding_ == 0, "a fiber stack was not handed back before its world ended");
}

boost::context::stack_context fiber_stacks::allocate() {
  stack_cache& cache = this_threads_stacks();
  cache.reserve_for(stack_bytes_, outstanding_ + 1);
  char* bottom = static_cast<char*>(cache.take(stack_bytes_));
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
  unpoison_stack_region(bottom, stack.size);
  --outstanding_;
  this_threads_stacks().give_back(bottom, stack.size);
}

}  // namespace kvsim::sim
