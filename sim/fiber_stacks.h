#pragma once
// Fixed-size fiber stacks from a pool, as Boost.Fiber's pooled_fixedsize_stack, with one
// addition for AddressSanitizer builds: a stack is unpoisoned when it is handed out and when
// it comes back. Without it, stale redzones survive on a reused stack (the frames that were
// live when the previous fiber switched away for the last time never returned) and ASan
// reports false errors in the next fiber; the same holds below a catch after an exception
// unwound frames on a fiber stack, which ASan cannot clean up itself because it does not
// know the stack's bounds (google/sanitizers issue 189). Debian's Boost.Context is not built
// with BOOST_USE_ASAN, so the switch annotations are not available to do this for us.
#include <boost/context/stack_context.hpp>
#include <boost/fiber/pooled_fixedsize_stack.hpp>
#include <cstddef>

namespace kvsim::sim {

// Marks [bottom, bottom + bytes) addressable again in ASan builds; nothing otherwise.
void unpoison_stack_region(void* bottom, std::size_t bytes);

class fiber_stacks {
 public:
  explicit fiber_stacks(std::size_t stack_bytes) : pool_(stack_bytes) {}

  boost::context::stack_context allocate() {
    boost::context::stack_context stack = pool_.allocate();
    unpoison(stack);
    last_ = stack;
    return stack;
  }
  void deallocate(boost::context::stack_context& stack) noexcept {
    unpoison(stack);
    pool_.deallocate(stack);
  }
  // The stack handed out most recently (the world records it for the actor it launches).
  const boost::context::stack_context& last_allocated() const { return last_; }

 private:
  static void unpoison(const boost::context::stack_context& stack) {
    unpoison_stack_region(static_cast<char*>(stack.sp) - stack.size, stack.size);
  }

  boost::fibers::pooled_fixedsize_stack pool_;
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
