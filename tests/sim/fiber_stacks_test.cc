// The pool of fiber stacks a search shares between its worlds (sim/fiber_stacks.h): a stack
// that comes back is handed out again rather than freed, worlds that name the pool take their
// actors' stacks from it and give every one back, and a world refuses a pool of another
// stack size.
#include "sim/fiber_stacks.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/fiber/fiber.hpp>
#include <cstdint>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

#include "sim/search/first_choice.h"
#include "sim/world.h"

#if defined(__SANITIZE_ADDRESS__)
#define KVSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVSIM_TEST_ASAN 1
#endif
#endif

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

// The permissions /proc/self/maps gives the mapping that holds `address` ("rw-p", "---p").
std::string permissions_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range;
    std::string permissions;
    fields >> range >> permissions;
    const auto dash = range.find('-');
    const std::uintptr_t from = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uintptr_t to = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (from <= at && at < to) return permissions;
  }
  return "unmapped";
}

// Below every stack lies a page nobody may touch, and a stack kept for reuse keeps it.
TEST(FiberStacks, EveryStackHasAGuardPageBelowIt) {
  fiber_stacks stacks(64 * 1024);
  boost::context::stack_context stack = stacks.allocate();
  char* const bottom = static_cast<char*>(stack.sp) - stack.size;
  EXPECT_EQ(permissions_at(bottom).substr(0, 2), "rw");
  EXPECT_EQ(permissions_at(static_cast<char*>(stack.sp) - 1).substr(0, 2), "rw");
  EXPECT_EQ(permissions_at(bottom - 1).substr(0, 3), "---") << "no guard page below the stack";
  stacks.deallocate(stack);
  boost::context::stack_context again = stacks.allocate();
  EXPECT_EQ(again.sp, stack.sp) << "the kept stack";
  EXPECT_EQ(permissions_at(static_cast<char*>(again.sp) - again.size - 1).substr(0, 3), "---")
      << "a kept stack lost its guard";
  stacks.deallocate(again);
}

// Each frame touches its whole kilobyte, so the frames walk down the stack a kilobyte at a
// time and cannot step over the guard page.
int deep(int depth) {
  volatile char frame[1024];
  for (std::size_t i = 0; i < sizeof frame; i += 64) frame[i] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return deep(depth - 1) + frame[512];
}

// A fiber that overflows its stack faults at the guard page (SIGSEGV), where a stack from the
// heap let it write over the memory below and return as if nothing happened. The recursion
// goes 16 KiB past the 64 KiB stack, and no further: only a guard stops it.
TEST(FiberStacksDeathTest, AnOverflowFaultsAtTheGuardPage) {
#if defined(KVSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer reports the overflow itself";
#else
  EXPECT_EXIT(
      {
        fiber_stacks stacks(64 * 1024);
        boost::fibers::fiber fiber(std::allocator_arg, fiber_stack_ref(stacks), [] { deep(80); });
        fiber.join();
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
#endif
}

#if !defined(KVSIM_TEST_ASAN)
// (Not under AddressSanitizer, whose shadow memory needs more address space than a limit
// leaves: the tests that would call it skip there.)
// The address space in use now and `headroom` more, as this process's limit (a ulimit -v).
bool limit_address_space_to_headroom(rlim_t headroom) {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  const rlim_t limit = pages * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + headroom;
  const rlimit address_space{limit, limit};
  return ::setrlimit(RLIMIT_AS, &address_space) == 0;
}
#endif

// Short of address space (a ulimit), a world with more actors than their stacks fit in
// throws std::bad_alloc from run(), in the caller, before any fiber started: it used to start
// the fibers it could and die of a signal in the switch or of the world's own assertion.
TEST(FiberStacks, AWorldShortOfMemoryThrowsBadAllocInsteadOfDying) {
#if defined(KVSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer's shadow memory needs more address space than a limit leaves";
#else
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 128 MiB more than in use now: 2,000 actors need 500 MiB of stacks.
    if (!limit_address_space_to_headroom(rlim_t{128} << 20)) std::_Exit(3);
    int code = 1;
    try {
      first_choice chooser;
      world w(chooser, world_config{});
      for (std::uint32_t i = 0; i < 2000; ++i) w.spawn({0, "actor", i}, [] {});
      w.run();
    } catch (const std::bad_alloc&) {
      code = 0;
    }
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "died of signal " << WTERMSIG(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "expected std::bad_alloc from run(), exit status " << WEXITSTATUS(status);
#endif
}

// Short of address space for an actor spawned during the run (as a transfer engine spawns an
// executor per transfer), run() throws std::bad_alloc once every fiber has unwound, and every
// stack is back in the pool. It used to die of SIGSEGV: the failed spawn left an actor record
// without a fiber, which teardown then resumed (Boost switched to a null context).
TEST(FiberStacks, ASpawnShortOfMemoryDuringTheRunEndsItWithBadAlloc) {
#if defined(KVSIM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer's shadow memory needs more address space than a limit leaves";
#else
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 64 MiB more: room for some 250 actors' stacks, far fewer than the spawner asks for.
    if (!limit_address_space_to_headroom(rlim_t{64} << 20)) std::_Exit(3);
    int code = 1;
    fiber_stacks pool;
    std::uint32_t spawned = 0;
    try {
      first_choice chooser;
      world_config config;
      config.stack_pool = &pool;
      world w(chooser, config);
      w.spawn({0, "spawner", 0}, [&w, &spawned] {
        for (std::uint32_t i = 0; i < 100'000; ++i) {
          // Each child starts and sleeps, holding its stack, while the spawner sleeps a
          // moment: the failure finds started, blocked actors to unwind.
          w.spawn({1, "child", i}, [&w] { w.wait_virtual(1'000'000'000); });
          ++spawned;
          w.wait_virtual(1);
        }
      });
      w.run();
      code = 4;  // the run ended without running out of memory
    } catch (const std::bad_alloc&) {
      code = spawned > 0 && pool.outstanding() == 0 ? 0 : 5;
    }
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "died of signal " << WTERMSIG(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "expected std::bad_alloc from run() with every stack back, exit status "
      << WEXITSTATUS(status) << " (4: no bad_alloc, 5: stacks still out or nothing spawned)";
#endif
}

// Out of memory in the scheduler's own work (here a delivery, which runs inside the decision
// loop) ends the run as out of memory too, wherever the decision is taken: in Boost's
// pick_next as an actor returns (noexcept: it used to std::terminate), or in run() itself
// (the exception left run() with the world still marked running, and its destructor
// asserted).
TEST(FiberStacks, OutOfMemoryInTheSchedulerEndsTheRunWithBadAlloc) {
  fiber_stacks pool;
  {
    first_choice chooser;
    world_config config;
    config.stack_pool = &pool;
    world w(chooser, config);
    // The sleeper is blocked when the delivery runs: teardown unwinds it.
    w.spawn({0, "sleeper", 0}, [&w] { w.wait_virtual(1'000'000); });
    w.spawn({0, "poster", 0}, [&w] { w.post(0, [] { throw std::bad_alloc(); }); });
    EXPECT_THROW(w.run(), std::bad_alloc);
  }
  EXPECT_EQ(pool.outstanding(), 0u);
  {
    first_choice chooser;
    world_config config;
    config.stack_pool = &pool;
    world w(chooser, config);
    // No actor: run()'s first decision is the delivery.
    w.post(0, [] { throw std::bad_alloc(); });
    EXPECT_THROW(w.run(), std::bad_alloc);
  }
}

}  // namespace
}  // namespace kvsim::sim::fiber_stacks_test
