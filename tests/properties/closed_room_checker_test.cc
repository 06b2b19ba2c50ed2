#include "properties/closed_room_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/kv_status.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::closed_room_checker_test {
namespace {

using core::kv_status;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request

std::size_t changed(event_builder& log, core::rank_id rank, room_key key,
                    std::optional<kv_status> from, kv_status to) {
  return log.decided(rank, core::status_changed{key, from, to});
}

// --- fires ------------------------------------------------------------------------------

TEST(ClosedRoomChecker, FiresOnAChunkAdmittedAfterTheRoomClosed) {
  // DOMAIN.md B9: admission not stopped by the close; the chunk writes after the ACK.
  event_builder log;
  log.decided(0, core::room_opened{request_a});                               // step 1
  log.decided(0, core::chunk_admitted{request_a, 1});                         // step 2
  const auto close = log.decided(0, core::room_closed{request_a, 1, false});  // step 3
  const auto admit = log.decided(0, core::chunk_admitted{request_a, 2});      // step 4

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 0 admitted a chunk of room 7/gen 0 at step 4, but the room was closed at step 3",
      {close, admit},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, FiresOnAChunkAdmittedAfterAFailureThatNeverClosedTheRoom) {
  // fail() that marks the request Failed but forgets to close its room: chunks queued after
  // the failure still write for a request that is over.
  event_builder log;
  log.decided(0, core::room_opened{request_a});                                          // step 1
  const auto failed = changed(log, 0, request_a, kv_status::transferring, kv_status::failed);  // 2
  const auto admit = log.at(6).decided(0, core::chunk_admitted{request_a, 1});
  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 0 admitted a chunk of room 7/gen 0 at step 6, but the request had been Failed "
      "there since step 2 and its room was never closed (a failure closes admission)",
      {failed, admit},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, FiresWhenDecodeCompletesARequestAPrefillRankFailed) {
  // One Failed rank fails the request: a core that ignores prefill's own failure (B8's world,
  // or fail() doing nothing) lets decode take the request as a success.
  event_builder log;
  const auto failure = log.at(4).add(sim::failure_injected{request_a, 0});
  const auto completed = log.at(9).decided(
      1, core::request_pages_released{request_a, core::release_reason::completed, 0, 1});

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 1 completed room 7/gen 0 at step 9, but prefill rank 0 had failed it at step 4 "
      "(one Failed rank fails the request)",
      {failure, completed},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, QuietWhenAFailedRequestIsReleasedAsAborted) {
  event_builder log;
  log.at(4).add(sim::failure_injected{request_a, 0});
  log.at(9).decided(1, core::request_pages_released{request_a, core::release_reason::all_acks, 1, 1});
  log.at(11).decided(1, core::request_pages_released{request_b, core::release_reason::completed, 0, 1});
  closed_room_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(ClosedRoomChecker, FiresOnAChunkAdmittedIntoATombstonedRoom) {
  // DOMAIN.md B10: the ABORT came before the sender; without the tombstone it starts anyway.
  event_builder log;
  const auto close = log.at(5).decided(2, core::room_closed{request_a, 0, true});
  log.decided(2, core::room_opened{request_a});
  const auto admit = log.at(9).decided(2, core::chunk_admitted{request_a, 1});

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 2 admitted a chunk of room 7/gen 0 at step 9, but the room was closed before it "
      "opened at step 5",
      {close, admit},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, FiresOnAChunkAdmittedAfterTheClosedRoomWasCleared) {
  event_builder log;
  log.decided(0, core::room_opened{request_a});
  const auto close = log.decided(0, core::room_closed{request_a, 0, false});
  log.decided(0, core::room_cleared{request_a});
  log.decided(0, core::tombstone_evicted{request_a});
  log.decided(0, core::room_opened{request_a});
  const auto admit = log.decided(0, core::chunk_admitted{request_a, 1});

  closed_room_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I4: rank 0 admitted a chunk of room 7/gen 0 at step 6, but the room was closed at "
            "step 2");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{close, admit}));
}

TEST(ClosedRoomChecker, FiresOnAStatusThatLeavesFailed) {
  event_builder log;
  changed(log, 1, request_a, std::nullopt, kv_status::bootstrapping);  // step 1
  const auto failed = changed(log, 1, request_a, kv_status::bootstrapping, kv_status::failed);
  const auto left = changed(log, 1, request_a, kv_status::failed, kv_status::transferring);

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 1 changed the status of room 7/gen 0 from Failed to Transferring at step 3 "
      "(Failed since step 2)",
      {failed, left},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, FiresOnAChangeThatSaysItLeftFailedEvenWithoutItsHistory) {
  event_builder log;
  const auto left = changed(log, 1, request_a, kv_status::failed, kv_status::success);

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 1 changed the status of room 7/gen 0 from Failed to Success at step 1",
      {left},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(ClosedRoomChecker, FiresOnAFailedStatusThatComesBackAsAnotherStatus) {
  // The change claims it came from no status: the events show the request was Failed.
  event_builder log;
  changed(log, 0, request_a, std::nullopt, kv_status::bootstrapping);
  const auto failed = changed(log, 0, request_a, kv_status::bootstrapping, kv_status::failed);
  const auto back = changed(log, 0, request_a, std::nullopt, kv_status::bootstrapping);

  closed_room_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 0 changed the status of room 7/gen 0 to Bootstrapping at step 3, but it had "
      "been Failed since step 2 (the change says it came from no status)",
      {failed, back},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

// --- quiet ------------------------------------------------------------------------------

TEST(ClosedRoomChecker, StaysQuietWhenTheLifetimeTrackerRefusesAdmissionAfterTheClose) {
  event_builder log;
  core::room_lifetimes lifetimes(0, log, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  ASSERT_TRUE(lifetimes.close(request_a));
  ASSERT_FALSE(lifetimes.try_acquire(request_a));  // refused: an event, not an admission
  ASSERT_TRUE(lifetimes.release(request_a));
  ASSERT_TRUE(lifetimes.clear(request_a));
  ASSERT_FALSE(lifetimes.open(request_a));  // its tombstone refuses a late open
  ASSERT_TRUE(lifetimes.close(request_b));  // the next request: tombstoned
  ASSERT_FALSE(lifetimes.open(request_b));

  closed_room_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ClosedRoomChecker, StaysQuietOnAdmissionsOfOtherRoomsAndRanks) {
  event_builder log;
  log.decided(0, core::room_closed{request_a, 0, false});
  log.decided(0, core::chunk_admitted{request_b, 1});  // the room's next request
  log.decided(1, core::chunk_admitted{request_a, 1});  // the same request on another rank

  closed_room_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ClosedRoomChecker, StaysQuietWhenTheStatusTableKeepsFailedSticky) {
  event_builder log;
  core::transfer_status_table statuses(1, log);
  statuses.update(request_a, kv_status::bootstrapping);
  statuses.update(request_a, kv_status::transferring);
  statuses.update(request_a, kv_status::failed);
  statuses.update(request_a, kv_status::success);  // ignored: terminal
  statuses.update(request_a, kv_status::failed);   // ignored: unchanged
  statuses.erase(request_a);
  statuses.update(request_a, kv_status::failed);         // ignored: absent room
  statuses.update(request_b, kv_status::bootstrapping);  // the room's next request
  statuses.update(request_b, kv_status::success);
  ASSERT_EQ(log.events().size(), 9u);  // erase emits status_forgotten

  closed_room_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(ClosedRoomChecker, StaysQuietOnASecondChangeIntoFailed) {
  event_builder log;
  changed(log, 0, request_a, kv_status::transferring, kv_status::failed);
  changed(log, 0, request_a, std::nullopt, kv_status::failed);  // not leaving Failed

  closed_room_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

}  // namespace
}  // namespace kvsim::properties::closed_room_checker_test
