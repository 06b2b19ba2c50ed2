#include "properties/ack_after_drain_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/room_lifetimes.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::ack_after_drain_checker_test {
namespace {

using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request

constexpr sim::transfer_id transfer_1 = 4294967297;  // rank 1's first transfer
constexpr sim::transfer_id transfer_5 = 5;           // rank 0's fifth
constexpr sim::transfer_id transfer_6 = 6;

std::size_t opened(event_builder& log, core::rank_id rank, room_key key) {
  return log.decided(rank, core::room_opened{key});
}
std::size_t closed(event_builder& log, core::rank_id rank, room_key key, bool tombstone = false) {
  return log.decided(rank, core::room_closed{key, 0, tombstone});
}
std::size_t admitted(event_builder& log, core::rank_id rank, room_key key) {
  return log.decided(rank, core::chunk_admitted{key, 1});
}
std::size_t released(event_builder& log, core::rank_id rank, room_key key) {
  return log.decided(rank, core::chunk_released{key, 0});
}
std::size_t submitted(event_builder& log, sim::transfer_id id, room_key owner, core::rank_id from,
                      core::rank_id to) {
  return log.add(sim::transfer_submitted{id, owner, from, to, {4}, {2}});
}
std::size_t ended(event_builder& log, sim::transfer_id id, room_key owner) {
  return log.add(sim::transfer_ended{id, owner, core::transfer_poll::succeeded});
}
// A drain-ACK that claims what a correct sender would: closed, nothing in flight.
std::size_t ack(event_builder& log, core::rank_id rank, room_key key, core::rank_id to,
                bool claims_closed = true, std::uint32_t claims_in_flight = 0) {
  return log.decided(rank, core::drain_ack_sent{key, to, 77, claims_closed, claims_in_flight});
}

const std::string claims_drained =
    "the drain-ACK claimed the room closed with 0 transfer(s) in flight";

// --- fires ------------------------------------------------------------------------------

TEST(AckAfterDrainChecker, FiresOnAnAckSentWhileATransferOfTheRequestStillRuns) {
  // DOMAIN.md B2: the ACK is sent on receipt of the ABORT, not after the writes stopped.
  event_builder log;
  opened(log, 1, request_a);
  const auto submit = log.at(9).add(sim::transfer_submitted{transfer_1, request_a, 1, 0, {4}, {2}});
  closed(log, 1, request_a);
  const auto sent = log.at(12).decided(1, core::drain_ack_sent{request_a, 0, 77, true, 0});

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 1 sent a drain-ACK for room 7/gen 0 to rank 0 at step 12 while transfer "
      "4294967297 of that request was still running (submitted at step 9)",
      {submit, sent},
      {claims_drained}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresOnAnAckForARoomThatIsStillOpen) {
  event_builder log;
  const auto open = log.at(3).decided(0, core::room_opened{request_a});
  const auto sent = log.at(5).decided(0, core::drain_ack_sent{request_a, 1, 77, true, 0});

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 5 while room 7/gen 0 was "
      "still open (opened at step 3)",
      {open, sent},
      {claims_drained}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresOnAnAckForARoomClosedOnlyOnAnotherRank) {
  event_builder log;
  closed(log, 2, request_a);  // rank 2 closed it; rank 0 never did
  closed(log, 0, request_b);  // rank 0 closed the next request of the room
  const auto sent = ack(log, 0, request_a, 1, false, 0);

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 3 while room 7/gen 0 had "
      "not been closed on that rank",
      {sent},
      {"the drain-ACK claimed the room open with 0 transfer(s) in flight"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresOnAnAckForARoomThatWasClearedWithoutAClose) {
  // DOMAIN.md B10's tracker: an ABORT for a finished request leaves no tombstone either.
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.open(request_a));   // step 1
  ASSERT_TRUE(lifetimes.clear(request_a));  // step 2: finished normally
  const auto sent = ack(log, 0, request_a, 1, false, 0);

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 3 while room 7/gen 0 was "
      "cleared at step 2 without being closed",
      {1, sent},
      {"the drain-ACK claimed the room open with 0 transfer(s) in flight"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresOnAnAckWhileAChunkLeaseIsStillPending) {
  // DOMAIN.md B4/B7: a chunk's first future failed; its siblings (and its lease) still run.
  event_builder log;
  opened(log, 0, request_a);                        // step 1
  admitted(log, 0, request_a);                      // step 2
  const auto second = admitted(log, 0, request_a);  // step 3
  released(log, 0, request_a);                      // step 4: one lease left
  closed(log, 0, request_a);                        // step 5
  const auto sent = ack(log, 0, request_a, 1);      // step 6

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 6 while 1 chunk lease of "
      "that request was still pending (admitted at step 3)",
      {second, sent},
      {claims_drained}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresOnATransferThatOnlyTimedOut) {
  // DOMAIN.md B12: a poll timed out, but the copy may still be running.
  event_builder log;
  opened(log, 0, request_a);
  const auto submit = submitted(log, transfer_5, request_a, 0, 1);  // step 2
  log.add(sim::transfer_timed_out{transfer_5, request_a, true});
  closed(log, 0, request_a);
  const auto sent = ack(log, 0, request_a, 1);  // step 5

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 5 while transfer 5 of that "
      "request was still running (submitted at step 2)",
      {submit, sent},
      {claims_drained}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, NamesEveryReasonAtOnceAndEveryRunningTransfer) {
  event_builder log;
  const auto open = opened(log, 0, request_a);                      // step 1
  const auto chunk = admitted(log, 0, request_a);                   // step 2
  const auto first = submitted(log, transfer_5, request_a, 0, 1);   // step 3
  const auto second = submitted(log, transfer_6, request_a, 0, 2);  // step 4
  const auto sent = ack(log, 0, request_a, 1, false, 2);            // step 5

  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 5 while room 7/gen 0 was "
      "still open (opened at step 1), transfers 5 and 6 of that request were still running "
      "(submitted at steps 3 and 4) and 1 chunk lease of that request was still pending "
      "(admitted at step 2)",
      {open, chunk, first, second, sent},
      {"the drain-ACK claimed the room open with 2 transfer(s) in flight"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, FiresWhenAChunkIsAdmittedAfterTheCloseAndStillRunsAtTheAck) {
  // DOMAIN.md B9: the room closed, a chunk admitted anyway, the ACK sent while it writes.
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.open(request_a));              // step 1
  ASSERT_TRUE(lifetimes.close(request_a));             // step 2
  log.decided(0, core::chunk_admitted{request_a, 1});  // step 3: what a broken tracker emits
  const auto submit = submitted(log, transfer_5, request_a, 0, 1);  // step 4
  const auto sent = ack(log, 0, request_a, 1);                      // step 5

  ack_after_drain_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 5 while transfer 5 "
            "of that request was still running (submitted at step 4) and 1 chunk lease of that "
            "request was still pending (admitted at step 3)");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{2, submit, sent}));
}

// --- quiet ------------------------------------------------------------------------------

TEST(AckAfterDrainChecker, FiresOnAnAckItsOwnSenderCalledEarly) {
  // The events show the room closed and drained, but the sender reported a transfer in
  // flight as it sent the ACK: by its own account it did not wait.
  event_builder log;
  opened(log, 0, request_a);
  closed(log, 0, request_a);
  const auto sent = log.at(5).decided(0, core::drain_ack_sent{request_a, 1, 77, true, 1});
  ack_after_drain_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 sent a drain-ACK for room 7/gen 0 to rank 1 at step 5 while the sender "
      "itself reported the room closed with 1 transfer(s) in flight",
      {sent},
      {"the drain-ACK claimed the room closed with 1 transfer(s) in flight"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AckAfterDrainChecker, StaysQuietWhenTheAckFollowsTheCloseAndTheDrain) {
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  submitted(log, transfer_5, request_a, 0, 1);
  submitted(log, transfer_6, request_a, 0, 2);  // a sibling to another decode rank
  ASSERT_TRUE(lifetimes.close(request_a));
  ended(log, transfer_5, request_a);
  log.add(sim::transfer_ended{transfer_6, request_a, core::transfer_poll::failed});
  ASSERT_TRUE(lifetimes.release(request_a));
  ack(log, 0, request_a, 1);
  ack(log, 0, request_a, 2);

  ack_after_drain_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(AckAfterDrainChecker, StaysQuietOnAnAckForAFinishedRoomThatAnAbortTombstoned) {
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.clear(request_a));  // finished normally
  ASSERT_TRUE(lifetimes.close(request_a));  // the late ABORT leaves a tombstone
  ack(log, 0, request_a, 1);

  ack_after_drain_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(AckAfterDrainChecker, StaysQuietOnAnAckForATombstonedRoom) {
  // DOMAIN.md B10, fixed: the ABORT came before the sender opened the room.
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.close(request_a));  // a tombstone
  ASSERT_FALSE(lifetimes.open(request_a));  // the late sender is refused
  ack(log, 0, request_a, 1);

  ack_after_drain_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(AckAfterDrainChecker, StaysQuietWhileOtherRequestsAndOtherRanksStillTransfer) {
  event_builder log;
  opened(log, 0, request_a);
  submitted(log, transfer_5, request_b, 0, 1);  // the room's next request, same rank
  submitted(log, transfer_1, request_a, 1, 1);  // the same request, another prefill rank
  admitted(log, 0, request_b);
  admitted(log, 1, request_a);
  closed(log, 0, request_a);
  ack(log, 0, request_a, 1);

  ack_after_drain_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

}  // namespace
}  // namespace kvsim::properties::ack_after_drain_checker_test
