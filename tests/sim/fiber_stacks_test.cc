// The pool of fiber stacks a search shares between its worlds (sim/fiber_stacks.h): a stack
// that comes back is handed out again rather than freed, worlds that name the pool take their
// actors' stacks from it and give every one back, and a world refuses a pool of another
// stack size.
#include "sim/fiber_stacks.h"

#include <gtest/gtest.h>

#include "sim/first_choice.h"
#include "sim/world.h"

namespace kvsim::sim::fiber_stacks_test {
namespace {

TEST(FiberStacks, AStackThatComesBackIsHandedOutAgain) {
  fiber_stacks stacks(64 * 1024);
  boost::context::stack_context first = stacks.allocate();
  EXPECT_EQ(first.size, 64u * 1024u);
  EXPECT_EQ(stacks.outstanding(), 1u);
  void* const first_top = first.sp;
  stacks.deallocate(first);
  EXPECT_EQ(stacks.outstanding(), 0u);
  EXPECT_EQ(stacks.kept(), 1u);
  boost::context::stack_context again = stacks.allocate();
  EXPECT_EQ(again.sp, first_top) << "the kept stack, not fresh memory";
  EXPECT_EQ(stacks.kept(), 0u);
  boost::context::stack_context second = stacks.allocate();
  EXPECT_NE(second.sp, again.sp);
  stacks.deallocate(second);
  stacks.deallocate(again);
  EXPECT_EQ(stacks.kept(), 2u);
}

// Worlds one after another on one pool: the second world's actors run on the stacks the first
// one's actors used, and every stack is back when a world ends.
TEST(FiberStacks, WorldsOnOnePoolReuseTheirStacks) {
  fiber_stacks pool;
  for (int round = 0; round < 3; ++round) {
    first_choice chooser;
    world_config config;
    config.stack_pool = &pool;
    {
      world w(chooser, config);
      int ran = 0;
      for (const char* name : {"a", "b", "c", "d"}) w.spawn({0, name, 0}, [&] { ++ran; });
      EXPECT_EQ(w.run().end, run_end::quiescent);
      EXPECT_EQ(ran, 4);
    }
    EXPECT_EQ(pool.outstanding(), 0u) << "round " << round;
    EXPECT_EQ(pool.kept(), 4u) << "round " << round << ": four actors, four stacks, reused";
  }
}

TEST(FiberStacksDeathTest, AWorldRefusesAPoolOfAnotherStackSize) {
  fiber_stacks pool(64 * 1024);
  first_choice chooser;
  world_config config;  // default_stack_bytes
  config.stack_pool = &pool;
  EXPECT_DEATH(world(chooser, config), "fiber stack pool of another stack size");
}

TEST(FiberStacksDeathTest, APoolEndingWithAStackOutIsAnAssertion) {
  EXPECT_DEATH(
      {
        fiber_stacks pool(64 * 1024);
        pool.allocate();
      },
      "not handed back before its pool ended");
}

}  // namespace
}  // namespace kvsim::sim::fiber_stacks_test
