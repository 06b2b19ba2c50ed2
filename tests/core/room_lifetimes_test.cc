#include "core/room_lifetimes.h"

#include <gtest/gtest.h>

#include <optional>
#include <variant>
#include <vector>

#include "tests/support/recording_sink.h"

namespace kvsim::core::room_lifetimes_test {
namespace {

using testing::recording_sink;

const room_key request_a{7, 0};
const room_key request_a_next{7, 1};  // the same room id, reused by the next request
const room_key request_b{8, 0};
const room_key request_c{9, 0};
const room_key request_d{10, 0};

// The error a call returned, or nothing when it succeeded (reading .error() of a success
// aborts the whole test binary; this keeps a wrong success an ordinary test failure).
std::optional<lifetime_error> error_of(const status<lifetime_error>& s) {
  if (s.ok()) return std::nullopt;
  return s.error();
}

// Everything observable about the tracker for a fixed set of keys, to prove that a refused
// call changed nothing.
struct key_snapshot {
  bool tracked = false;
  bool admitting = false;
  bool closed = false;
  bool tombstoned = false;
  std::uint32_t pending = 0;
  bool operator==(const key_snapshot&) const = default;
};

struct lifetimes_snapshot {
  std::vector<key_snapshot> keys;
  std::uint32_t rooms = 0;
  std::uint32_t tombstones = 0;
  bool operator==(const lifetimes_snapshot&) const = default;
};

lifetimes_snapshot snapshot(const room_lifetimes& lifetimes, const std::vector<room_key>& keys) {
  lifetimes_snapshot s;
  for (const room_key& key : keys) {
    s.keys.push_back({lifetimes.is_tracked(key), lifetimes.is_admitting(key),
                      lifetimes.is_closed(key), lifetimes.is_tombstoned(key),
                      lifetimes.pending_leases(key)});
  }
  s.rooms = lifetimes.room_count();
  s.tombstones = lifetimes.tombstone_count();
  return s;
}

TEST(RoomLifetimes, AnOpenedRoomIsTrackedAndAdmitting) {
  recording_sink sink;
  room_lifetimes lifetimes(2, sink, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  EXPECT_TRUE(lifetimes.is_tracked(request_a));
  EXPECT_TRUE(lifetimes.is_admitting(request_a));
  EXPECT_FALSE(lifetimes.is_closed(request_a));
  EXPECT_FALSE(lifetimes.is_tombstoned(request_a));
  EXPECT_EQ(lifetimes.pending_leases(request_a), 0u);
  EXPECT_EQ(lifetimes.room_count(), 1u);
  EXPECT_EQ(lifetimes.tombstone_count(), 0u);
  ASSERT_EQ(sink.size(), 1u);
  EXPECT_EQ(sink.events()[0].rank, 2u);
  ASSERT_TRUE(sink.last<room_opened>().has_value());
  EXPECT_EQ(sink.last<room_opened>()->key, request_a);
  // Another generation of the same room id is another request: untouched.
  EXPECT_FALSE(lifetimes.is_tracked(request_a_next));
  EXPECT_FALSE(lifetimes.is_admitting(request_a_next));
}

TEST(RoomLifetimes, AcquireAndReleaseCountChunkLeases) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  EXPECT_EQ(sink.last<chunk_admitted>()->pending_leases, 1u);
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  EXPECT_EQ(sink.last<chunk_admitted>()->pending_leases, 2u);
  EXPECT_EQ(sink.last<chunk_admitted>()->key, request_a);
  EXPECT_EQ(lifetimes.pending_leases(request_a), 2u);

  ASSERT_TRUE(lifetimes.release(request_a));
  EXPECT_EQ(sink.last<chunk_released>()->pending_leases, 1u);
  ASSERT_TRUE(lifetimes.release(request_a));
  EXPECT_EQ(sink.last<chunk_released>()->pending_leases, 0u);
  EXPECT_EQ(sink.last<chunk_released>()->key, request_a);
  EXPECT_EQ(lifetimes.pending_leases(request_a), 0u);
  EXPECT_EQ(sink.count<chunk_admitted>(), 2u);
  EXPECT_EQ(sink.count<chunk_released>(), 2u);
  EXPECT_EQ(sink.count<lifetime_refused>(), 0u);
}

TEST(RoomLifetimes, CloseStopsAdmissionButKeepsLeasesAndTheDrainCanFinish) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));

  ASSERT_TRUE(lifetimes.close(request_a));
  const auto closed = sink.last<room_closed>();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(closed->key, request_a);
  EXPECT_EQ(closed->pending_leases, 2u);
  EXPECT_FALSE(closed->tombstone);
  EXPECT_TRUE(lifetimes.is_tracked(request_a));
  EXPECT_TRUE(lifetimes.is_closed(request_a));
  EXPECT_FALSE(lifetimes.is_admitting(request_a));
  EXPECT_FALSE(lifetimes.is_tombstoned(request_a));
  EXPECT_EQ(lifetimes.pending_leases(request_a), 2u) << "close keeps the in-flight leases";

  // No new chunk after the abort (DOMAIN.md I4).
  EXPECT_EQ(error_of(lifetimes.try_acquire(request_a)), lifetime_error::room_closed);
  EXPECT_EQ(lifetimes.pending_leases(request_a), 2u);

  // The drain: both sibling chunks finish and release.
  ASSERT_TRUE(lifetimes.release(request_a));
  EXPECT_EQ(error_of(lifetimes.clear(request_a)), lifetime_error::leases_pending);
  ASSERT_TRUE(lifetimes.release(request_a));
  EXPECT_EQ(lifetimes.pending_leases(request_a), 0u);
  ASSERT_TRUE(lifetimes.clear(request_a));
  EXPECT_EQ(sink.last<room_cleared>()->key, request_a);
  EXPECT_FALSE(lifetimes.is_tracked(request_a));
  EXPECT_EQ(lifetimes.room_count(), 0u);
}

TEST(RoomLifetimes, CloseBeforeOpenLeavesATombstoneThatRefusesTheLateSender) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.close(request_a));
  const auto closed = sink.last<room_closed>();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(closed->key, request_a);
  EXPECT_EQ(closed->pending_leases, 0u);
  EXPECT_TRUE(closed->tombstone);
  EXPECT_FALSE(lifetimes.is_tracked(request_a));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_a));
  EXPECT_TRUE(lifetimes.is_closed(request_a));
  EXPECT_FALSE(lifetimes.is_admitting(request_a));
  EXPECT_EQ(lifetimes.tombstone_count(), 1u);
  EXPECT_EQ(lifetimes.room_count(), 0u);

  // The sender created after the ABORT (DOMAIN.md B10).
  EXPECT_EQ(error_of(lifetimes.open(request_a)), lifetime_error::tombstoned);
  EXPECT_EQ(error_of(lifetimes.try_acquire(request_a)), lifetime_error::room_closed);
  EXPECT_FALSE(lifetimes.is_tracked(request_a));
  EXPECT_EQ(lifetimes.pending_leases(request_a), 0u);
  EXPECT_EQ(sink.count<room_opened>(), 0u);
  EXPECT_EQ(sink.count<chunk_admitted>(), 0u);

  // The next request on the reused room id is another incarnation and opens normally.
  ASSERT_TRUE(lifetimes.open(request_a_next));
  EXPECT_TRUE(lifetimes.is_admitting(request_a_next));
}

TEST(RoomLifetimes, ClearingADrainedOpenRoomLeavesNoTombstone) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  ASSERT_TRUE(lifetimes.release(request_a));
  ASSERT_TRUE(lifetimes.clear(request_a));
  EXPECT_FALSE(lifetimes.is_tracked(request_a));
  EXPECT_FALSE(lifetimes.is_tombstoned(request_a));
  EXPECT_FALSE(lifetimes.is_closed(request_a));
  EXPECT_EQ(lifetimes.tombstone_count(), 0u);
  EXPECT_EQ(sink.count<room_cleared>(), 1u);
}

TEST(RoomLifetimes, ClearingAClosedRoomLeavesATombstoneSoItsIncarnationCannotReopen) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.close(request_a));
  EXPECT_EQ(lifetimes.tombstone_count(), 0u) << "a tracked closed room is not yet a tombstone";
  ASSERT_TRUE(lifetimes.clear(request_a));
  EXPECT_FALSE(lifetimes.is_tracked(request_a));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_a));
  EXPECT_TRUE(lifetimes.is_closed(request_a));
  EXPECT_EQ(lifetimes.finished_count(), 1u);
  EXPECT_EQ(lifetimes.tombstone_count(), 0u) << "an aborted room that is over is no before-open tombstone";
  EXPECT_EQ(error_of(lifetimes.open(request_a)), lifetime_error::tombstoned);
  EXPECT_EQ(error_of(lifetimes.try_acquire(request_a)), lifetime_error::room_closed);
}

TEST(RoomLifetimes, DuplicateCloseOfATrackedRoomIsIdempotent) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  const std::vector<room_key> keys{request_a, request_a_next, request_b};
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.try_acquire(request_a));
  ASSERT_TRUE(lifetimes.close(request_a));
  const auto after_first = snapshot(lifetimes, keys);
  ASSERT_TRUE(lifetimes.close(request_a));
  EXPECT_EQ(snapshot(lifetimes, keys), after_first);
  EXPECT_EQ(sink.count<room_closed>(), 2u) << "every ABORT is visible in the event stream";
  EXPECT_EQ(sink.count<lifetime_refused>(), 0u);
  EXPECT_EQ(lifetimes.pending_leases(request_a), 1u);
}

TEST(RoomLifetimes, DuplicateCloseBeforeOpenKeepsOneTombstone) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  const std::vector<room_key> keys{request_a, request_a_next, request_b};
  ASSERT_TRUE(lifetimes.close(request_a));
  const auto after_first = snapshot(lifetimes, keys);
  ASSERT_TRUE(lifetimes.close(request_a));
  EXPECT_EQ(snapshot(lifetimes, keys), after_first);
  EXPECT_EQ(lifetimes.tombstone_count(), 1u);
  EXPECT_EQ(sink.count<tombstone_evicted>(), 0u);
  EXPECT_TRUE(sink.last<room_closed>()->tombstone);
}

TEST(RoomLifetimes, AFullTombstoneTableEvictsTheOldestInsertedFirst) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 2);
  EXPECT_EQ(lifetimes.tombstones_max(), 2u);
  // Inserted in an order that differs from the key order: eviction follows insertion.
  ASSERT_TRUE(lifetimes.close(request_c));
  ASSERT_TRUE(lifetimes.close(request_a));
  EXPECT_EQ(sink.count<tombstone_evicted>(), 0u);
  sink.clear();

  ASSERT_TRUE(lifetimes.close(request_b));
  EXPECT_EQ(lifetimes.tombstone_count(), 2u);
  EXPECT_FALSE(lifetimes.is_tombstoned(request_c));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_a));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_b));
  ASSERT_EQ(sink.count<tombstone_evicted>(), 1u);
  EXPECT_EQ(sink.last<tombstone_evicted>()->key, request_c);

  // The evicted key is admitted again (documented trade-off; the event shows why).
  ASSERT_TRUE(lifetimes.open(request_c));
  EXPECT_TRUE(lifetimes.is_admitting(request_c));
  // The surviving tombstones still refuse.
  EXPECT_EQ(error_of(lifetimes.open(request_a)), lifetime_error::tombstoned);
  EXPECT_EQ(error_of(lifetimes.open(request_b)), lifetime_error::tombstoned);
}

TEST(RoomLifetimes, ADuplicateCloseDoesNotRefreshATombstonesAge) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 2);
  ASSERT_TRUE(lifetimes.close(request_a));
  ASSERT_TRUE(lifetimes.close(request_b));
  ASSERT_TRUE(lifetimes.close(request_a));  // duplicated ABORT
  ASSERT_TRUE(lifetimes.close(request_c));
  EXPECT_EQ(sink.last<tombstone_evicted>()->key, request_a);
  EXPECT_FALSE(lifetimes.is_tombstoned(request_a));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_b));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_c));
}

// A former defect: with one table, every cleared aborted room added a tombstone, so
// ordinary abort traffic evicted the before-open tombstone that stops a late sender (B10).
// Before the fix this test failed: request_b's tombstone was evicted and its late open admitted.
TEST(RoomLifetimes, OrdinaryAbortsNeverEvictABeforeOpenTombstone) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 1);
  ASSERT_TRUE(lifetimes.close(request_b));  // the ABORT came before request_b's sender
  for (generation_t g = 0; g < 5; ++g) {    // ordinary aborts of rooms that were open
    const room_key aborted{40, g};
    ASSERT_TRUE(lifetimes.open(aborted));
    ASSERT_TRUE(lifetimes.close(aborted));
    ASSERT_TRUE(lifetimes.clear(aborted));
  }
  EXPECT_TRUE(lifetimes.is_tombstoned_before_open(request_b));
  EXPECT_EQ(error_of(lifetimes.open(request_b)), lifetime_error::tombstoned)
      << "the late sender must still be refused";
}

// A replayed ABORT of a room that is over here (its memory retired) is closed into the finished
// table: however many come, the before-open tombstone that stops a late sender stays.
TEST(RoomLifetimes, ClosesOfRoomsThatAreOverNeverEvictABeforeOpenTombstone) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 1);
  ASSERT_TRUE(lifetimes.close(request_b));  // the ABORT came before request_b's sender
  for (generation_t g = 0; g < 5; ++g) {
    const room_key over{40, g};
    ASSERT_TRUE(lifetimes.open(over));  // served and finished without an abort
    ASSERT_TRUE(lifetimes.clear(over));
    sink.clear();
    ASSERT_TRUE(lifetimes.close_over(over));  // then its ABORT, replayed or late
    ASSERT_FALSE(sink.events().empty());
    const auto* closed = std::get_if<room_closed>(&sink.events()[0].body);
    ASSERT_NE(closed, nullptr);
    EXPECT_TRUE(closed->tombstone);
    EXPECT_EQ(closed->table, tombstone_table::finished);
    EXPECT_TRUE(lifetimes.is_closed(over));
    ASSERT_TRUE(lifetimes.close_over(over));  // idempotent
  }
  EXPECT_EQ(lifetimes.finished_count(), 1u);
  EXPECT_TRUE(lifetimes.is_tombstoned_before_open(request_b));
  EXPECT_EQ(error_of(lifetimes.open(request_b)), lifetime_error::tombstoned)
      << "the late sender must still be refused";
}

// The caller learns which before-open tombstones a call ended without their open, so that it
// can end what it remembers of their ABORTs with them; nothing else is reported as ended.
TEST(RoomLifetimes, ReportsTheBeforeOpenTombstonesACallEndsUnopened) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 2, 1);
  room_lifetimes::unopened_ends ended;
  ASSERT_TRUE(lifetimes.close(room_key{7, 0}, &ended));
  ASSERT_TRUE(lifetimes.close(room_key{7, 1}, &ended));
  EXPECT_TRUE(ended.empty()) << "a tombstone added ends nothing";
  ASSERT_TRUE(lifetimes.open(room_key{7, 3}, &ended));
  EXPECT_EQ(ended, (room_lifetimes::unopened_ends{room_key{7, 0}, room_key{7, 1}}));
  ended.clear();
  ASSERT_TRUE(lifetimes.close(room_key{8, 0}, &ended));
  ASSERT_TRUE(lifetimes.close(room_key{9, 0}, &ended));
  ASSERT_TRUE(lifetimes.close(room_key{10, 0}, &ended));  // the two-place table evicts {8, 0}
  EXPECT_EQ(ended, (room_lifetimes::unopened_ends{room_key{8, 0}}));
  ended.clear();
  EXPECT_EQ(error_of(lifetimes.open(room_key{9, 0}, &ended)), lifetime_error::tombstoned);
  EXPECT_TRUE(ended.empty()) << "a tombstone whose open came ended opened, not unopened";
  ASSERT_TRUE(lifetimes.close(room_key{7, 3}, &ended));  // a close of an open room
  ASSERT_TRUE(lifetimes.close(room_key{10, 0}, &ended));  // a duplicate close
  EXPECT_TRUE(ended.empty());
}

TEST(RoomLifetimes, ACloseOfARoomThatIsOverButStillOpenIsAnOrdinaryClose) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 1);
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.close_over(request_a));
  EXPECT_TRUE(lifetimes.is_tracked(request_a));
  EXPECT_FALSE(lifetimes.is_admitting(request_a));
  EXPECT_EQ(lifetimes.finished_count(), 0u);
  EXPECT_EQ(lifetimes.tombstone_count(), 0u);
}

TEST(RoomLifetimes, ClearingAClosedRoomIntoAFullFinishedTableEvictsItsOldest) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 1);
  ASSERT_TRUE(lifetimes.close(request_b));  // before-open: another table, untouched
  ASSERT_TRUE(lifetimes.open(request_a));
  ASSERT_TRUE(lifetimes.close(request_a));
  ASSERT_TRUE(lifetimes.clear(request_a));
  ASSERT_TRUE(lifetimes.open(request_c));
  ASSERT_TRUE(lifetimes.close(request_c));
  sink.clear();
  ASSERT_TRUE(lifetimes.clear(request_c));
  EXPECT_TRUE(lifetimes.is_tombstoned(request_c));
  EXPECT_FALSE(lifetimes.is_tombstoned(request_a));
  EXPECT_TRUE(lifetimes.is_tombstoned_before_open(request_b));
  EXPECT_EQ(lifetimes.finished_count(), 1u);
  ASSERT_EQ(sink.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<room_cleared>(sink.events()[0].body));
  ASSERT_TRUE(std::holds_alternative<tombstone_evicted>(sink.events()[1].body));
  EXPECT_EQ(std::get<tombstone_evicted>(sink.events()[1].body).key, request_a);
  EXPECT_EQ(std::get<tombstone_evicted>(sink.events()[1].body).table, tombstone_table::finished);
}

// The explicit policy when the before-open table is full: its oldest goes, with an event, and
// that generation's late open is admitted (the event stream says why).
TEST(RoomLifetimes, AFullBeforeOpenTableEvictsItsOldestAndSaysSo) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 2);
  ASSERT_TRUE(lifetimes.close({50, 0}));
  ASSERT_TRUE(lifetimes.close({51, 0}));
  sink.clear();
  ASSERT_TRUE(lifetimes.close({52, 0}));
  EXPECT_EQ(lifetimes.tombstone_count(), 2u);
  ASSERT_EQ(sink.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<room_closed>(sink.events()[0].body));
  const auto* evicted = std::get_if<tombstone_evicted>(&sink.events()[1].body);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->key, (room_key{50, 0}));
  EXPECT_EQ(evicted->table, tombstone_table::before_open);
  EXPECT_TRUE(lifetimes.open({50, 0})) << "evicted: the late open is admitted, as documented";
}

// A before-open tombstone lives until its generation can no longer arrive: its own open came
// (refused, the tombstone moves to the finished table), or a newer generation opened here.
TEST(RoomLifetimes, ABeforeOpenTombstoneLivesUntilItsGenerationCanNoLongerArrive) {
  recording_sink sink;
  room_lifetimes lifetimes(0, sink, 4);
  ASSERT_TRUE(lifetimes.close({60, 0}));
  ASSERT_TRUE(lifetimes.close({61, 0}));
  EXPECT_EQ(error_of(lifetimes.open({60, 0})), lifetime_error::tombstoned);
  EXPECT_FALSE(lifetimes.is_tombstoned_before_open({60, 0}));
  EXPECT_TRUE(lifetimes.is_tombstoned({60, 0})) << "its reopen is still refused";
  EXPECT_EQ(lifetimes.finished_count(), 1u);
  sink.clear();
  ASSERT_TRUE(lifetimes.open({61, 1}));
  EXPECT_FALSE(lifetimes.is_tombstoned({61, 0}));
  EXPECT_EQ(lifetimes.tombstone_count(), 0u);
  ASSERT_EQ(sink.size(), 2u);
  const auto* retired = std::get_if<tombstone_retired>(&sink.events()[1].body);
  ASSERT_NE(retired, nullptr);
  EXPECT_EQ(retired->key, (room_key{61, 0}));
  EXPECT_EQ(retired->opened, 1u);
}

TEST(RoomLifetimesDeathTest, AZeroSizedTombstoneTableRefusesToExist) {
  EXPECT_DEATH(
      {
        recording_sink sink;
        room_lifetimes lifetimes(0, sink, 0);
      },
      "at least one");
}

// --- refusals: each returns its error, changes nothing, and is emitted ------------------

class RoomLifetimesRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lifetimes.open(leased_room));
    ASSERT_TRUE(lifetimes.try_acquire(leased_room));
    ASSERT_TRUE(lifetimes.open(draining_room));
    ASSERT_TRUE(lifetimes.try_acquire(draining_room));
    ASSERT_TRUE(lifetimes.close(draining_room));
    ASSERT_TRUE(lifetimes.close(tombstoned_room));
    ASSERT_TRUE(lifetimes.open(idle_room));
    sink.clear();
    before = snapshot(lifetimes, keys);
  }

  // The refusal left every observable unchanged and produced exactly one refusal event.
  void expect_refused_without_change(lifetime_error error, room_key key) {
    EXPECT_EQ(snapshot(lifetimes, keys), before);
    ASSERT_EQ(sink.size(), 1u);
    const auto refused = sink.last<lifetime_refused>();
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->error, error);
    EXPECT_EQ(refused->key, key);
    EXPECT_EQ(sink.events()[0].rank, 5u);
  }

  const room_key leased_room{1, 0};      // open, one chunk in flight
  const room_key draining_room{2, 0};    // closed, one chunk still in flight
  const room_key tombstoned_room{3, 0};  // closed before it was opened
  const room_key idle_room{4, 0};        // open, no chunk in flight
  const room_key unknown{5, 0};          // never seen
  const room_key leased_next{1, 1};      // the next incarnation of leased_room's id
  const std::vector<room_key> keys{leased_room, draining_room, tombstoned_room,
                                   idle_room,   unknown,       leased_next};

  recording_sink sink;
  room_lifetimes lifetimes{5, sink, 4};
  lifetimes_snapshot before;
};

TEST_F(RoomLifetimesRefusal, AcquireOnAnUnknownRoom) {
  EXPECT_EQ(error_of(lifetimes.try_acquire(unknown)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, unknown);
}

TEST_F(RoomLifetimesRefusal, AcquireOnAnotherGenerationOfAnOpenRoom) {
  EXPECT_EQ(error_of(lifetimes.try_acquire(leased_next)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, leased_next);
}

TEST_F(RoomLifetimesRefusal, ReleaseOnAnUnknownRoom) {
  EXPECT_EQ(error_of(lifetimes.release(unknown)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, unknown);
}

TEST_F(RoomLifetimesRefusal, ReleaseOnATombstone) {
  EXPECT_EQ(error_of(lifetimes.release(tombstoned_room)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, tombstoned_room);
}

TEST_F(RoomLifetimesRefusal, ClearOfAnUnknownRoom) {
  EXPECT_EQ(error_of(lifetimes.clear(unknown)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, unknown);
}

TEST_F(RoomLifetimesRefusal, ClearOfATombstone) {
  EXPECT_EQ(error_of(lifetimes.clear(tombstoned_room)), lifetime_error::unknown_room);
  expect_refused_without_change(lifetime_error::unknown_room, tombstoned_room);
}

TEST_F(RoomLifetimesRefusal, OpenOfAnOpenRoom) {
  EXPECT_EQ(error_of(lifetimes.open(leased_room)), lifetime_error::already_open);
  expect_refused_without_change(lifetime_error::already_open, leased_room);
}

TEST_F(RoomLifetimesRefusal, OpenOfAClosedRoomThatIsStillDraining) {
  EXPECT_EQ(error_of(lifetimes.open(draining_room)), lifetime_error::already_open);
  expect_refused_without_change(lifetime_error::already_open, draining_room);
}

TEST_F(RoomLifetimesRefusal, LateOpenAfterCloseBeforeOpen) {
  EXPECT_EQ(error_of(lifetimes.open(tombstoned_room)), lifetime_error::tombstoned);
  // The one refusal that changes the table: the tombstone moves to the finished table.
  EXPECT_TRUE(lifetimes.is_tombstoned(tombstoned_room));
  EXPECT_FALSE(lifetimes.is_tombstoned_before_open(tombstoned_room));
  ASSERT_FALSE(sink.events().empty());
  const auto* refused = std::get_if<lifetime_refused>(&sink.events()[0].body);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->error, lifetime_error::tombstoned);
  sink.clear();
  before = snapshot(lifetimes, keys);
  EXPECT_EQ(error_of(lifetimes.open(tombstoned_room)), lifetime_error::tombstoned);
  expect_refused_without_change(lifetime_error::tombstoned, tombstoned_room);
}

TEST_F(RoomLifetimesRefusal, AcquireOnAClosedRoom) {
  EXPECT_EQ(error_of(lifetimes.try_acquire(draining_room)), lifetime_error::room_closed);
  expect_refused_without_change(lifetime_error::room_closed, draining_room);
}

TEST_F(RoomLifetimesRefusal, AcquireOnATombstone) {
  EXPECT_EQ(error_of(lifetimes.try_acquire(tombstoned_room)), lifetime_error::room_closed);
  expect_refused_without_change(lifetime_error::room_closed, tombstoned_room);
}

TEST_F(RoomLifetimesRefusal, ReleaseWithoutALease) {
  EXPECT_EQ(error_of(lifetimes.release(idle_room)), lifetime_error::lease_underflow);
  expect_refused_without_change(lifetime_error::lease_underflow, idle_room);
}

TEST_F(RoomLifetimesRefusal, ReleaseOneMoreThanAcquired) {
  ASSERT_TRUE(lifetimes.release(draining_room));
  sink.clear();
  before = snapshot(lifetimes, keys);
  EXPECT_EQ(error_of(lifetimes.release(draining_room)), lifetime_error::lease_underflow);
  expect_refused_without_change(lifetime_error::lease_underflow, draining_room);
}

TEST_F(RoomLifetimesRefusal, ClearWhileAChunkIsInFlight) {
  EXPECT_EQ(error_of(lifetimes.clear(leased_room)), lifetime_error::leases_pending);
  expect_refused_without_change(lifetime_error::leases_pending, leased_room);
}

TEST_F(RoomLifetimesRefusal, ClearOfAClosedRoomBeforeItsDrainEnds) {
  EXPECT_EQ(error_of(lifetimes.clear(draining_room)), lifetime_error::leases_pending);
  expect_refused_without_change(lifetime_error::leases_pending, draining_room);
}

}  // namespace
}  // namespace kvsim::core::room_lifetimes_test
