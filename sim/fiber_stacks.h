#pragma once
// Fixed-size fiber stacks from a pool, as Boost.Fiber's pooled_fixedsize_stack, with one
// addition for AddressSanitizer builds: a stack is unpoisoned when it is handed out and when
// it comes back. Without it, stale redzones survive on a reused stack (the frames that were
// live when the previous fiber switched away for the last time never returned) and ASan
// reports false errors in the next fiber; the same holds below a catch after an exception
// unwound frames on a fiber stack, which ASan cannot clean up itself because it does not
// know the stack's bounds (a switch that does not announce itself to ASan). Debian's Boost.Context is not built
// with BOOST_USE_ASAN, so the switch annotations are not available to do this for us.
//
// Each stack is a mapping of its own whose lowest page is a guard (PROT_NONE): a fiber that
// overflows its stack faults there, a SIGSEGV at a known place, where a stack from the heap
// would silently overwrite the heap below it. The guard is not part of stack_bytes.
//
// A stack that comes back is kept for the next one asked for, not freed: one pool may serve
// every run of a search (world_config::stack_pool), so a run after the first takes no fresh
// memory for its fibers. That matters most under AddressSanitizer, whose allocator maps and
// unmaps every block this size afresh (perf put ~45% of a DPOR test in those mappings, the page
// faults behind them and the shadow memory's memset; the test ran 2.4x faster with a pool). Only memory is reused: a fiber
// never reads its stack before writing it, so nothing of one run reaches the next.
#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

namespace kvsim::sim {

// Marks [bottom, bottom + bytes) addressable again in ASan builds; nothing otherwise.
void unpoison_stack_region(void* bottom, std::size_t bytes);

// The stack size of every simulated actor (what every scenario world has always used; the
// suite passes with it under AddressSanitizer's larger frames too).
inline constexpr std::size_t default_stack_bytes = 256 * 1024;

class fiber_stacks {
 public:
  explicit fiber_stacks(std::size_t stack_bytes = default_stack_bytes);
  ~fiber_stacks();  // every stack must be back (asserted); the kept ones are unmapped
  fiber_stacks(const fiber_stacks&) = delete;
  fiber_stacks& operator=(const fiber_stacks&) = delete;

  // std::bad_alloc when no memory is left for a stack (a ulimit, a cgroup).
  boost::context::stack_context allocate();
  // Keeps at least `stacks` stacks ready, so that the next `stacks` allocations cannot fail:
  // a world reserves its actors' stacks before it starts any fiber, where running out of
  // memory is a plain exception in the caller (std::bad_alloc), not a failure mid-switch.
  void reserve(std::size_t stacks);
  void deallocate(boost::context::stack_context& stack) noexcept;
  // The stack handed out most recently (the world records it for the actor it launches).
  const boost::context::stack_context& last_allocated() const { return last_; }
  std::size_t stack_bytes() const { return stack_bytes_; }
  std::size_t outstanding() const { return outstanding_; }
  std::size_t kept() const { return kept_.size(); }
  // The guard below each stack: one page.
  static std::size_t guard_bytes();

 private:
  char* map_one() const;  // a fresh stack's mapping, guard page protected

  std::size_t stack_bytes_;
  std::size_t mapping_bytes_;    // the guard page + stack_bytes_ rounded up to whole pages
  std::size_t outstanding_ = 0;  // handed out and not yet back
  std::vector<char*> kept_;      // stacks ready for the next allocate (each its mapping's start)
  boost::context::stack_context last_;
};

// A reference to a pool that Boost.Fiber can copy into each fiber it creates.
class fiber_stack_ref {
 public:
  explicit fiber_stack_ref(fiber_stacks& stacks) : stacks_(&stacks) {}
  boost::context::stack_context allocate() { return stacks_->allocate(); }
  void deallocate(boost::context::stack_context& stack) noexcept { stacks_->deallocate(stack); }

 private:
  fiber_stacks* stacks_;
};

}  // namespace kvsim::sim
