// rank_thread: a rank built, run and destroyed on its own thread; work handed to it as
// messages (call, watch) runs there; its failures reach whoever waits on it.
#include "real_backend/host/rank_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>

#include "real_backend/host/thread_identity.h"

namespace kvsim::real::rank_thread_test {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr auto idle = std::chrono::microseconds(50);

clock_type::time_point soon() { return clock_type::now() + std::chrono::seconds(10); }

std::uint64_t this_thread() { return host_threads().current_thread(); }

// Counts its steps; says which thread built it, and which destroyed it.
struct counting_rank {
  explicit counting_rank(std::atomic<std::uint64_t>& destroyed_on)
      : built_on(this_thread()), destroyed_on_(destroyed_on) {}
  ~counting_rank() { destroyed_on_ = this_thread(); }
  void step() {
    ++steps;
    if (fail_at != 0 && steps >= fail_at) throw std::runtime_error("the rank's step failed");
  }
  std::uint64_t built_on;
  std::uint64_t steps = 0;
  std::uint64_t fail_at = 0;  // 0: never
  std::atomic<std::uint64_t>& destroyed_on_;
};

std::unique_ptr<rank_thread<counting_rank>> start(std::atomic<std::uint64_t>& destroyed_on) {
  return std::make_unique<rank_thread<counting_rank>>(
      "the test rank's thread",
      [&destroyed_on] { return std::make_unique<counting_rank>(destroyed_on); }, idle);
}

TEST(RankThread, BuildsRunsAndDestroysTheRankOnItsOwnThread) {
  std::atomic<std::uint64_t> destroyed_on{0};
  auto rank = start(destroyed_on);
  const auto [built_on, called_on] =
      rank->call([](counting_rank& r) { return std::pair(r.built_on, this_thread()); }, soon());
  EXPECT_EQ(called_on, built_on);
  EXPECT_NE(called_on, this_thread());
  rank.reset();
  EXPECT_EQ(destroyed_on.load(), built_on);
}

TEST(RankThread, AWatchIsSignalledOnceItsConditionHoldsOnTheOwner) {
  std::atomic<std::uint64_t> destroyed_on{0};
  auto rank = start(destroyed_on);
  auto done = std::make_shared<step_signal>();
  std::atomic<std::uint64_t> checked_on{0};
  rank->watch(
      [&checked_on](counting_rank& r) {
        checked_on = this_thread();
        return r.steps >= 20;
      },
      done);
  ASSERT_TRUE(done->wait_until(soon()));
  EXPECT_GE(rank->call([](counting_rank& r) { return r.steps; }, soon()), 20u);
  EXPECT_EQ(checked_on.load(), rank->call([](counting_rank& r) { return r.built_on; }, soon()));
}

TEST(RankThread, ACallsOwnExceptionGoesBackToItsCallerAndTheThreadGoesOn) {
  std::atomic<std::uint64_t> destroyed_on{0};
  auto rank = start(destroyed_on);
  EXPECT_THROW(rank->call([](counting_rank&) -> int { throw std::logic_error("refused"); }, soon()),
               std::logic_error);
  EXPECT_NO_THROW(rank->rethrow_if_failed());
  EXPECT_GT(rank->call([](counting_rank& r) { return r.steps; }, soon()), 0u);
}

TEST(RankThread, AFailedStepReleasesTheWaitersAndEveryLaterCallThrowsIt) {
  std::atomic<std::uint64_t> destroyed_on{0};
  auto rank = start(destroyed_on);
  auto never = std::make_shared<step_signal>();
  rank->watch([](counting_rank&) { return false; }, never);
  rank->call([](counting_rank& r) { r.fail_at = r.steps + 1; }, soon());
  ASSERT_TRUE(never->wait_until(soon()));  // released by the failure, not by its condition
  try {
    rank->rethrow_if_failed();
    ADD_FAILURE() << "the failure was not kept";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the rank's step failed");
  }
  EXPECT_THROW(rank->call([](counting_rank& r) { return r.steps; }, soon()), std::runtime_error);
  EXPECT_NE(destroyed_on.load(), 0u);  // destroyed on its thread when the loop ended
}

TEST(RankThread, ACallThatIsNotAnsweredInTimeGivesUp) {
  std::atomic<std::uint64_t> destroyed_on{0};
  auto rank = start(destroyed_on);
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  // The owner is busy in the first call; the second waits behind it past its deadline.
  auto busy = std::async(std::launch::async, [&] {
    rank->call(
        [&entered, released](counting_rank&) {
          entered.set_value();
          released.wait();
        },
        soon());
  });
  entered.get_future().wait();
  EXPECT_THROW(rank->call([](counting_rank&) {}, clock_type::now() + std::chrono::milliseconds(20)),
               real_backend_error);
  release.set_value();
  busy.get();
}

}  // namespace
}  // namespace kvsim::real::rank_thread_test
