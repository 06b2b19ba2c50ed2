#include "properties/outcome_checker.h"

#include <gtest/gtest.h>

#include <optional>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::outcome_checker_test {
namespace {

using core::request_outcome;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request

// --- fires ------------------------------------------------------------------------------

TEST(OutcomeChecker, FiresOnARefusedOpenNobodyAbortedFor) {
  // A core whose open refuses a room no abort ever closed: prefill finishes the request as
  // aborted before it began, and every request of a fault-free run is lost.
  event_builder log;
  const auto allocated = log.at(2).allocated(0, request_a, {0, 1});
  const auto finished =
      log.at(5).decided(0, core::request_finished{request_a, request_outcome::aborted});

  outcome_checker checker;
  const sim::finding expected{
      "I9",
      "I9: room 7/gen 0 finished aborted on rank 0 at step 5 (it began there at step 2) with no "
      "cause: nobody aborted it, no deadline of it expired, no transfer of it failed and no "
      "fault fired before then",
      {allocated, finished},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeChecker, FiresWhenTheCauseBelongsToAnotherGenerationOfTheRoom) {
  // A's abort is no reason for B, which reuses the room, to fail.
  event_builder log;
  log.decided(1, core::abort_armed{request_a, {0}, 1, std::nullopt});
  log.decided(1, core::request_finished{request_a, request_outcome::aborted});
  const auto finished =
      log.at(9).decided(1, core::request_finished{request_b, request_outcome::failed});

  outcome_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->invariant, "I9");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{finished});
}

TEST(OutcomeChecker, TheAdversaryIsNoCause) {
  // Forged and replayed messages must be refused, so they cannot explain a failure either.
  event_builder log;
  log.add(sim::fault_fired{"forge"});
  log.add(sim::fault_fired{"replay"});
  log.add(sim::fault_fired{"abort"});
  log.decided(1, core::request_finished{request_a, request_outcome::aborted});
  outcome_checker checker;
  EXPECT_TRUE(observe_all(checker, log.events()).has_value());
}

// --- quiet ------------------------------------------------------------------------------

TEST(OutcomeChecker, QuietWhenTheRequestSucceeds) {
  event_builder log;
  log.decided(1, core::request_finished{request_a, request_outcome::succeeded});
  outcome_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(OutcomeChecker, QuietWhenEachFailureHasItsOwnCause) {
  const room_key aborted{1, 0}, failed_prefill{2, 0}, late{3, 0}, lost_peer{4, 0},
      broken_copy{5, 0}, stuck_copy{6, 0}, no_pages{8, 0}, unconfirmed{9, 0};
  event_builder log;
  log.decided(1, core::abort_armed{aborted, {0}, 1, std::nullopt});
  log.add(sim::failure_injected{failed_prefill, 0});
  log.decided(1, core::deadline_expired{late, core::deadline_action::failed_closed});
  log.decided(1, core::peer_death_handled{lost_peer, 0, core::peer_death_action::quarantined});
  log.add(sim::transfer_ended{1, broken_copy, core::transfer_poll::failed});
  log.add(sim::transfer_timed_out{2, stuck_copy, true});
  log.decided(1, core::allocation_refused{no_pages, 2, 0});
  log.decided(0, core::transfer_unconfirmed{unconfirmed, 3});
  for (const room_key& key :
       {aborted, failed_prefill, late, lost_peer, broken_copy, stuck_copy, no_pages, unconfirmed}) {
    log.decided(1, core::request_finished{key, request_outcome::aborted});
  }
  outcome_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(OutcomeChecker, QuietAfterAFaultThatMayFailAnyRequest) {
  for (const char* fault : {"delay", "duplicate", "drop", "stall", "fail", "peer_death"}) {
    event_builder log;
    log.add(sim::fault_fired{fault});
    log.decided(1, core::request_finished{request_a, request_outcome::failed});
    outcome_checker checker;
    EXPECT_EQ(observe_all(checker, log.events()), std::nullopt) << fault;
  }
  event_builder log;
  log.add(sim::rank_stopped{0});
  log.decided(1, core::request_finished{request_a, request_outcome::aborted});
  outcome_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::outcome_checker_test
