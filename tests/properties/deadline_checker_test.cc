#include "properties/deadline_checker.h"

#include <gtest/gtest.h>

#include <optional>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::deadline_checker_test {
namespace {

using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
constexpr core::rank_id decode = 1;

// The builder stamps step s with time 10*s us.
TEST(DeadlineChecker, FiresWhenACheckAfterTheDeadlineLeavesTheAbortWaiting) {
  // A check_deadlines that returns early, or a deadline never put in the set: the abort
  // waits for an ACK that may never come.
  event_builder log;
  const auto armed =
      log.at(2).decided(decode, core::abort_armed{request_a, {0}, 1, std::uint64_t{50}});
  log.at(4).add(sim::deadlines_checked{decode});  // t=40us: not due yet
  const auto check = log.at(5).add(sim::deadlines_checked{decode});  // t=50us: due
  deadline_checker checker;
  const sim::finding expected{
      "I9",
      "I9: rank 1 checked its deadlines at t=50us (step 5), but the abort of room 7/gen 0 armed "
      "at step 2 with deadline t=50us still waits for its drain-ACKs",
      {armed, check},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(DeadlineChecker, QuietWhenTheDeadlineExpiresOrTheAbortDrainsFirst) {
  event_builder log;
  const room_key b{8, 0};
  const room_key c{9, 0};
  log.at(1).decided(decode, core::abort_armed{request_a, {0}, 1, std::uint64_t{30}});
  log.decided(decode, core::abort_armed{b, {0}, 2, std::uint64_t{30}});
  log.decided(decode, core::abort_armed{c, {0}, 3, std::nullopt});  // waits for good
  log.at(3).decided(decode, core::deadline_expired{request_a, core::deadline_action::quarantined});
  log.decided(decode, core::request_finished{b, core::request_outcome::aborted});
  log.add(sim::deadlines_checked{decode});   // t=50us
  log.add(sim::deadlines_checked{2});        // another decode rank: none of its own
  log.at(90).add(sim::deadlines_checked{decode});
  deadline_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::deadline_checker_test
