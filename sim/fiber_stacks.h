#pragma once
// Fixed-size fiber stacks from a pool, as Boost.Fiber's pooled_fixedsize_stack, with one
// addition for AddressSanitizer builds: a stack is unpoisoned when it is handed out and when
// it comes back. Without it, stale redzones survive on a reused stack (the frames that were
// live when the previous fiber switched away for the last time never returned) and ASan
// reports false errors in the next fiber; the same holds below a catch after an exception
// unwound frames on a fiber stack, which ASan cannot clean up itself because it does not
// know the stack's bounds (google/sanitizers issue 189). Debian's Boost.Context is not built
// with BOOST_USE_ASAN, so the switch annotations are not available to do this for us.
//
// Stacks come from the heap, which is told (once per process) to keep freed memory: the next
// world's stacks reuse the blocks the last world freed. Building a Boost pool per world cost
// every run fresh mappings and the page faults of first touching each stack (10% of a run
// with 32 decode ranks). Only memory is reused: a fiber never reads its stack before writing
// it, so nothing of one run reaches the next.
#include <boost/context/stack_context.hpp>
#include <cstddef>

namespace kvsim::sim {

// Marks [bottom, bottom + bytes) addressable again in ASan builds; nothing otherwise.
void unpoison_stack_region(void* bottom, std::size_t bytes);

class fiber_stacks {
 public:
  explicit fiber_stacks(std::size_t stack_bytes) : stack_bytes_(stack_bytes) {}
  ~fiber_stacks();
  fiber_stacks(const fiber_stacks&) = delete;
  fiber_stacks& operator=(const fiber_stacks&) = delete;

  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& stack) noexcept;
  // The stack handed out most recently (the world records it for the actor it launches).
  const boost::context::stack_context& last_allocated() const { return last_; }

 private:
  std::size_t stack_bytes_;
  std::size_t outstanding_ = 0;  // handed out and not yet back
  boost::context::stack_context last_;
};

// A reference to one world's pool that Boost.Fiber can copy into each fiber it creates.
class fiber_stack_ref {
 public:
  explicit fiber_stack_ref(fiber_stacks& stacks) : stacks_(&stacks) {}
  boost::context::stack_context allocate() { return stacks_->allocate(); }
  void deallocate(boost::context::stack_context& stack) noexcept { stacks_->deallocate(stack); }

 private:
  fiber_stacks* stacks_;
};

}  // namespace kvsim::sim
