#include "properties/release_after_acks_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/page_ledger.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::release_after_acks_checker_test {
namespace {

using core::page_ledger;
using core::rank_id;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request
const room_key request_c{9, 0};

constexpr rank_id decode = 1;  // prefill ranks are 0 and 2

std::size_t armed(event_builder& log, room_key key, std::vector<rank_id> expected) {
  return log.decided(decode, core::abort_armed{key, std::move(expected), 77, std::nullopt});
}
std::size_t sent(event_builder& log, rank_id from, room_key key, rank_id to = decode) {
  return log.decided(from, core::drain_ack_sent{key, to, 77, true, 0});
}
std::size_t counted(event_builder& log, room_key key, rank_id from, std::uint32_t received,
                    std::uint32_t expected) {
  return log.decided(decode, core::drain_ack_counted{key, from, received, expected});
}
std::size_t released(event_builder& log, room_key key, core::release_reason reason,
                     std::uint32_t received, std::uint32_t expected) {
  return log.decided(decode, core::request_pages_released{key, reason, received, expected});
}

// --- fires ------------------------------------------------------------------------------

TEST(ReleaseAfterAcksChecker, FiresOnAFreeBeforeEveryExpectedRankDrainAcked) {
  event_builder log;
  log.allocated(decode, request_a, {4});
  const auto arm = log.at(12).decided(decode, core::abort_armed{request_a, {0, 2}, 77, std::nullopt});
  sent(log, 0, request_a);           // step 13
  counted(log, request_a, 0, 1, 2);  // step 14
  const auto freed = log.at(20).freed(decode, request_a, 4);

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 freed page 4 of room 7/gen 0 at step 20 while the drain-ACK from rank 2 was "
      "still missing (abort armed at step 12, expecting ranks 0 and 2)",
      {arm, freed},
      {"rank 0's drain-ACK counted at step 14", "rank 2: no drain-ACK counted"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, FiresOnAReleaseAtTheDeadlineWithNoAckAtAll) {
  // DOMAIN.md B12: the historical decode frees its pages when the deadline passes.
  event_builder log;
  page_ledger ledger(decode, 8, log);
  const auto pages = ledger.allocate(request_a, 2).value();  // step 1
  const auto arm = armed(log, request_a, {0, 2});            // step 2
  log.decided(decode, core::deadline_expired{request_a, core::deadline_action::released});
  released(log, request_a, core::release_reason::deadline, 0, 2);  // step 4
  ASSERT_TRUE(ledger.release_all(request_a));  // step 5 release_requested, 6 and 7 page_freed

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 freed page " + std::to_string(pages[0]) +
          " of room 7/gen 0 at step 6 while drain-ACKs from ranks 0 and 2 were still missing "
          "(abort armed at step 2, expecting ranks 0 and 2)",
      {arm, 5},
      {"rank 0: no drain-ACK counted", "rank 2: no drain-ACK counted"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, ADuplicateAckFromOneRankDoesNotStandInForAnother) {
  // The receiver's own counts say 2 of 2; the events say rank 0 twice and rank 2 never.
  event_builder log;
  log.allocated(decode, request_a, {4});           // step 1
  const auto arm = armed(log, request_a, {0, 2});  // step 2
  sent(log, 0, request_a);                         // step 3
  counted(log, request_a, 0, 1, 2);                // step 4
  sent(log, 0, request_a);                         // step 5: a duplicated ABORT, ACKed again
  counted(log, request_a, 0, 2, 2);                // step 6: counted again
  const auto release = released(log, request_a, core::release_reason::all_acks, 2, 2);  // 7

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 released the pages of room 7/gen 0 for all_acks at step 7 while the drain-ACK "
      "from rank 2 was still missing (abort armed at step 2, expecting ranks 0 and 2)",
      {arm, release},
      {"rank 0's drain-ACK counted at step 4", "rank 2: no drain-ACK counted",
       "the release reported 2 of 2 drain-ACKs received"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, FiresOnAStaleAckOfTheRoomsPreviousRequest) {
  // DOMAIN.md B11: rank 0 ACKed room 7/gen 0; decode matched by room and counted it for 7/gen 1.
  event_builder log;
  log.allocated(decode, request_b, {2});                // step 1
  const auto arm = armed(log, request_b, {0});          // step 2
  sent(log, 0, request_a);                              // step 3: the old request's ACK
  const auto stale = counted(log, request_b, 0, 1, 1);  // step 4
  const auto freed = log.freed(decode, request_b, 2);   // step 5

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 freed page 2 of room 7/gen 1 at step 5 while the drain-ACK from rank 0 was "
      "still missing (abort armed at step 2, expecting rank 0)",
      {arm, stale, freed},
      {"rank 0's drain-ACK counted at step 4 does not count: rank 0 sent none for room 7/gen 1 "
       "to rank 1"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, FiresOnAnAckSentToAnotherDecodeRank) {
  // DOMAIN.md B6: two decode ranks abort the same room; only rank 3 is acknowledged.
  event_builder log;
  log.allocated(decode, request_a, {4});
  armed(log, request_a, {0});
  sent(log, 0, request_a, 3);
  counted(log, request_a, 0, 1, 1);
  log.freed(decode, request_a, 4);

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I3: rank 1 freed page 4 of room 7/gen 0 at step 5 while the drain-ACK from rank 0 was "
            "still missing (abort armed at step 2, expecting rank 0)");
}

TEST(ReleaseAfterAcksChecker, FiresOnAnAllAcksReleaseThatReportsTooFewAcks) {
  event_builder log;
  const auto release = released(log, request_a, core::release_reason::all_acks, 1, 2);

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 released the pages of room 7/gen 0 for all_acks at step 1 with only 1 of 2 "
      "drain-ACKs received",
      {release},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, FiresOnAFreeAtTheMomentTheAbortIsSent) {
  // DOMAIN.md B1: the historical decode frees its pages when it sends the ABORT.
  event_builder log;
  log.allocated(decode, request_a, {4, 5});
  armed(log, request_a, {0});
  released(log, request_a, core::release_reason::at_abort, 0, 1);
  log.release_requested(decode, request_a, {4, 5}, {});
  log.freed(decode, request_a, 4);

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I3: rank 1 freed page 4 of room 7/gen 0 at step 5 while the drain-ACK from rank 0 was "
            "still missing (abort armed at step 2, expecting rank 0)");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{1, 4}));
}

// --- quiet ------------------------------------------------------------------------------

// Peer death: decode counted rank 2 drained on its loss alone, while the dead rank's posted
// writes could still land (the transport had not confirmed the teardown).
TEST(ReleaseAfterAcksChecker, FiresOnATeardownCountedBeforeTheTransportConfirmedIt) {
  event_builder log;
  log.allocated(decode, request_a, {4});
  const auto arm = log.at(12).decided(decode, core::abort_armed{request_a, {0, 2}, 77, std::nullopt});
  sent(log, 0, request_a);           // step 13
  counted(log, request_a, 0, 1, 2);  // step 14
  log.add(sim::rank_stopped{2});     // step 15
  const auto teardown = log.decided(decode, core::teardown_counted{request_a, 2, 2, 2});  // 16
  const auto release = released(log, request_a, core::release_reason::acks_and_teardowns, 1, 2);
  log.add(sim::transport_torn_down{2});  // too late

  release_after_acks_checker checker;
  const sim::finding expected{
      "I3",
      "I3: rank 1 released the pages of room 7/gen 0 for acks_and_teardowns at step 17 while the "
      "drain-ACK from rank 2 was still missing (abort armed at step 12, expecting ranks 0 and 2)",
      {arm, teardown, release},
      {"rank 0's drain-ACK counted at step 14",
       "rank 2's teardown counted at step 16 does not count: rank 2's transport had not "
       "confirmed it torn down",
       "the release reported 1 of 2 drain-ACKs received"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, StaysQuietWhenADeadRanksTeardownWasConfirmedBeforeTheFree) {
  event_builder log;
  log.allocated(decode, request_a, {4});
  armed(log, request_a, {0, 2});
  sent(log, 0, request_a);
  counted(log, request_a, 0, 1, 2);
  log.add(sim::rank_stopped{2});
  log.add(sim::transport_torn_down{2});
  log.decided(decode, core::teardown_counted{request_a, 2, 2, 2});
  released(log, request_a, core::release_reason::acks_and_teardowns, 1, 2);
  log.freed(decode, request_a, 4);

  release_after_acks_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(ReleaseAfterAcksChecker, StaysQuietWhenEveryExpectedRankAckedBeforeTheFree) {
  event_builder log;
  page_ledger ledger(decode, 8, log);
  ASSERT_TRUE(ledger.allocate(request_a, 2));
  armed(log, request_a, {0, 2});
  sent(log, 2, request_a);
  counted(log, request_a, 2, 1, 2);
  sent(log, 0, request_a);
  sent(log, 0, request_a);  // a duplicate: counted once
  counted(log, request_a, 0, 2, 2);
  released(log, request_a, core::release_reason::all_acks, 2, 2);
  ASSERT_TRUE(ledger.release_all(request_a));

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ReleaseAfterAcksChecker, StaysQuietOnFreesOfRequestsThatAreNotAborting) {
  event_builder log;
  page_ledger ledger(decode, 8, log);
  ASSERT_TRUE(ledger.allocate(request_a, 1));
  ASSERT_TRUE(ledger.allocate(request_c, 1));
  released(log, request_a, core::release_reason::completed, 0, 1);
  ASSERT_TRUE(ledger.release_all(request_a));            // completed before any abort
  armed(log, request_b, {0});                            // the room's next request aborts
  log.decided(0, core::abort_armed{request_c, {2}, 5, std::nullopt});  // another decode rank aborts c
  ASSERT_TRUE(ledger.release_all(request_c));            // not aborting on this rank

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ReleaseAfterAcksChecker, StaysQuietWhenARealAckFollowsOneThatDidNotCount) {
  event_builder log;
  log.allocated(decode, request_b, {2});
  armed(log, request_b, {0});
  sent(log, 0, request_a);  // the old request's ACK, counted for the new one
  counted(log, request_b, 0, 1, 1);
  sent(log, 0, request_b);  // the new request's own ACK
  counted(log, request_b, 0, 1, 1);
  log.freed(decode, request_b, 2);

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ReleaseAfterAcksChecker, StaysQuietOnAQuarantineThatALateAckHeals) {
  event_builder log;
  page_ledger ledger(decode, 8, log);
  ASSERT_TRUE(ledger.allocate(request_a, 2));
  armed(log, request_a, {0});
  log.decided(decode, core::deadline_expired{request_a, core::deadline_action::quarantined});
  sent(log, 0, request_a);
  counted(log, request_a, 0, 1, 1);
  released(log, request_a, core::release_reason::all_acks, 1, 1);
  ASSERT_TRUE(ledger.release_all(request_a));

  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ReleaseAfterAcksChecker, FiresOnTheDeathOfAPeerThatNeverStopped) {
  event_builder log;
  const auto lost = log.at(4).decided(
      decode, core::peer_death_handled{request_a, 2, core::peer_death_action::quarantined});
  release_after_acks_checker checker;
  const sim::finding expected{"I3",
                              "I3: rank 1 handled the death of rank 2 for room 7/gen 0 at step 4 "
                              "but rank 2 never stopped",
                              {lost},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ReleaseAfterAcksChecker, FiresOnADeathHandledTwiceButNotOnceForEachRequest) {
  event_builder log;
  log.add(sim::rank_stopped{2});
  log.decided(decode, core::peer_death_handled{request_a, 2, core::peer_death_action::quarantined});
  log.decided(decode, core::peer_death_handled{request_c, 2, core::peer_death_action::quarantined});
  release_after_acks_checker quiet;
  EXPECT_EQ(observe_all(quiet, log.events()), std::nullopt);
  log.decided(decode, core::peer_death_handled{request_a, 2, core::peer_death_action::already_torn_down});
  release_after_acks_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("a second time (first at step"), std::string::npos)
      << found->message;
}

}  // namespace
}  // namespace kvsim::properties::release_after_acks_checker_test
