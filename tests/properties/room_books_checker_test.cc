// The room table's books (I4) and its careless callers (misuse): the production table's own
// events are quiet, through opens, admissions, closes before and after the open, clears and a
// full tombstone table evicting its oldest; each kind of false report or wrong eviction fires,
// and so does a careless call the table accepts or refuses for the wrong reason.
#include "properties/room_books_checker.h"

#include <gtest/gtest.h>

#include "core/room_lifetimes.h"
#include "scenarios/careless_lifetime_call.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::room_books_checker_test {
namespace {

using core::room_key;
using sim::lifetime_call;
using testing::event_builder;
using testing::observe_all;

constexpr core::rank_id rank = 0;
const room_key a{1, 0};
const room_key b{2, 0};
const room_key c{3, 0};
const room_key d{4, 0};
const room_key nobody{99, 9};

void careless(event_builder& log, core::room_lifetimes& table, lifetime_call call, room_key key) {
  const sim::lifetime_misuse_attempted attempt{rank, call, key};
  log.add(attempt);
  log.add(sim::lifetime_misuse_answered{rank, scenarios::make_careless_lifetime_call(table, attempt)});
}

TEST(RoomBooksChecker, QuietOnTheProductionTablesOwnEventsThroughAFullTable) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 2});
  core::room_lifetimes table(rank, log, 2);
  ASSERT_TRUE(table.open(a));
  ASSERT_TRUE(table.try_acquire(a));
  ASSERT_TRUE(table.try_acquire(a));
  ASSERT_TRUE(table.close(a));
  ASSERT_FALSE(table.try_acquire(a));  // closed: refused
  ASSERT_FALSE(table.clear(a));        // leases pending: refused
  ASSERT_TRUE(table.release(a));
  ASSERT_TRUE(table.release(a));
  ASSERT_TRUE(table.clear(a));         // finished: a
  ASSERT_TRUE(table.close(b));         // before open: b
  ASSERT_FALSE(table.open(b));         // the late sender is refused; finished: a, b (full)
  ASSERT_TRUE(table.close(c));         // before open: c
  ASSERT_TRUE(table.open(d));
  ASSERT_TRUE(table.close(d));
  ASSERT_TRUE(table.clear(d));         // finished: evicts a, the oldest
  ASSERT_TRUE(table.close(c));         // idempotent: c is tombstoned already
  careless(log, table, lifetime_call::open, c);
  careless(log, table, lifetime_call::release, nobody);
  careless(log, table, lifetime_call::try_acquire, d);
  ASSERT_TRUE(table.open(b));          // the careless open moved c to finished, evicting b: admitted
  careless(log, table, lifetime_call::open, b);
  careless(log, table, lifetime_call::release, b);
  ASSERT_TRUE(table.try_acquire(b));
  careless(log, table, lifetime_call::clear, b);
  log.add(scenarios::read_room_table(table, rank, {a, b, c, d, nobody}));
  room_books_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(RoomBooksChecker, TheWrongCallTheWorldDrawsIsRefusedByTheTable) {
  event_builder log;
  core::room_lifetimes table(rank, log, 4);
  ASSERT_TRUE(table.open(a));
  ASSERT_TRUE(table.try_acquire(a));
  ASSERT_TRUE(table.open(b));
  ASSERT_TRUE(table.close(c));
  const std::vector<room_key> rooms{a, b, c};
  for (const lifetime_call call : {lifetime_call::open, lifetime_call::try_acquire,
                                   lifetime_call::release, lifetime_call::clear}) {
    for (std::size_t start = 0; start < rooms.size(); ++start) {
      const auto attempt = scenarios::wrong_lifetime_call(table, rank, call, rooms, start, nobody);
      EXPECT_TRUE(scenarios::make_careless_lifetime_call(table, attempt).has_value())
          << sim::to_string(call) << " of " << core::to_string(attempt.key);
    }
  }
}

TEST(RoomBooksChecker, FiresOnAPendingCountThatDoesNotStepByOne) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  const auto admitted = log.decided(rank, core::chunk_admitted{a, 1});
  const auto wrong = log.decided(rank, core::chunk_admitted{a, 3});
  room_books_checker checker;
  const sim::finding expected{"I4",
                              "I4: rank 0's room table reported 3 lease(s) pending on room 1/gen 0 "
                              "after an admission, its events make 2 at step 3",
                              {admitted, wrong},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(RoomBooksChecker, FiresOnACloseOfAnOpenRoomReportedAsBeforeItsOpen) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.decided(rank, core::room_closed{a, 0, true});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("as a close before its open"), std::string::npos) << found->message;
}

TEST(RoomBooksChecker, FiresOnAChunkAdmittedToARoomNeverOpened) {
  event_builder log;
  log.decided(rank, core::chunk_admitted{a, 1});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("a room it never opened"), std::string::npos);
}

TEST(RoomBooksChecker, FiresOnAClearWithLeasesPending) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.decided(rank, core::chunk_admitted{a, 1});
  log.decided(rank, core::room_cleared{a});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("with 1 chunk lease(s) pending"), std::string::npos);
}

// A close of a room that is over (close_over) puts its tombstone in the finished table: the
// production table's own events are quiet, and a before-open eviction it claimed would fire.
TEST(RoomBooksChecker, QuietOnClosesOfRoomsThatAreOverIntoAFullFinishedTable) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 1});
  core::room_lifetimes table(rank, log, 1);
  ASSERT_TRUE(table.close(a));  // before open: a
  for (const room_key& key : {b, c}) {
    ASSERT_TRUE(table.open(key));
    ASSERT_TRUE(table.clear(key));
    ASSERT_TRUE(table.close_over(key));  // finished: b, then c evicts b
  }
  room_books_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(RoomBooksChecker, FiresWhenACloseOfARoomThatIsOverEvictsABeforeOpenTombstone) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 1});
  log.decided(rank, core::room_closed{a, 0, true});
  log.decided(rank, core::room_closed{b, 0, true, core::tombstone_table::finished});
  const auto evicted = log.decided(rank, core::tombstone_evicted{a, core::tombstone_table::before_open});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->evidence.back(), evicted);
}

TEST(RoomBooksChecker, FiresWhenAFullTableEvictsItsNewestInsteadOfItsOldest) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 2});
  log.decided(rank, core::room_closed{a, 0, true});
  log.decided(rank, core::room_closed{b, 0, true});
  log.decided(rank, core::room_closed{c, 0, true});
  const auto evicted = log.decided(rank, core::tombstone_evicted{b, core::tombstone_table::before_open});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("instead of evicting that table's oldest, room 1/gen 0"),
            std::string::npos)
      << found->message;
  EXPECT_EQ(found->evidence.back(), evicted);
}

TEST(RoomBooksChecker, FiresWhenATableWithRoomToSpareEvicts) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 2});
  log.decided(rank, core::room_closed{a, 0, true});
  log.decided(rank, core::tombstone_evicted{a, core::tombstone_table::before_open});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("with no insert into a full table"), std::string::npos)
      << found->message;
}

TEST(RoomBooksChecker, FiresWhenAClearIntoAFullTableEvictsNothing) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 1});
  for (const room_key& key : {b, d}) {
    log.decided(rank, core::room_opened{key});
    log.decided(rank, core::room_closed{key, 0, false});
    log.decided(rank, core::room_cleared{key});
  }
  log.decided(rank, core::status_forgotten{d});  // no eviction of b came next
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("finished table, but instead of evicting that table's oldest, "
                                "room 2/gen 0"),
            std::string::npos)
      << found->message;
}

// A former defect as its event stream looked: with one table, the clear of an ordinary
// aborted room evicted the before-open tombstone that stops a late sender. The books see it.
TEST(RoomBooksChecker, FiresWhenAnOrdinaryAbortEvictsABeforeOpenTombstone) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 1});
  log.decided(rank, core::room_closed{a, 0, true});  // before-open: a late sender is coming
  log.decided(rank, core::room_opened{b});
  log.decided(rank, core::room_closed{b, 0, false});
  log.decided(rank, core::room_cleared{b});
  log.decided(rank, core::tombstone_evicted{a, core::tombstone_table::before_open});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("evicted the tombstone of room 1/gen 0 with no insert into a full table"), std::string::npos)
      << found->message;
}

TEST(RoomBooksChecker, FiresWhenAnOpenOfANewerGenerationRetiresNothing) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 2});
  log.decided(rank, core::room_closed{room_key{1, 0}, 0, true});
  log.decided(rank, core::room_opened{room_key{1, 1}});
  log.decided(rank, core::chunk_admitted{room_key{1, 1}, 1});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("instead of retiring the before-open tombstone of room 1/gen 0"),
            std::string::npos)
      << found->message;
}

TEST(RoomBooksChecker, FiresOnARetirementNoOpenOwes) {
  event_builder log;
  log.add(sim::lifetimes_created{rank, 2});
  log.decided(rank, core::room_closed{a, 0, true});
  log.decided(rank, core::tombstone_retired{a, 3});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("that no open of a newer generation"), std::string::npos)
      << found->message;
}

TEST(RoomBooksChecker, FiresOnARefusalTheBooksDoNotSupport) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.decided(rank, core::lifetime_refused{core::lifetime_error::tombstoned, a});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("left no tombstone for it"), std::string::npos);
}

TEST(RoomBooksChecker, FiresWhenACarelessClearWithLeasesPendingIsAccepted) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.decided(rank, core::chunk_admitted{a, 1});
  const auto attempt = log.add(sim::lifetime_misuse_attempted{rank, lifetime_call::clear, a});
  const auto cleared = log.decided(rank, core::room_cleared{a});
  const auto answer = log.add(sim::lifetime_misuse_answered{rank, std::nullopt});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->invariant, "misuse");
  EXPECT_EQ(found->message,
            "misuse: careless clear of room 1/gen 0 on rank 0's room table at step 5: answered "
            "accepted, its events say leases_pending");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{attempt, cleared, answer}));
}

TEST(RoomBooksChecker, FiresWhenACarelessCallIsRefusedForTheWrongReason) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.add(sim::lifetime_misuse_attempted{rank, lifetime_call::open, a});
  log.decided(rank, core::lifetime_refused{core::lifetime_error::unknown_room, a});
  log.add(sim::lifetime_misuse_answered{rank, core::lifetime_error::unknown_room});
  room_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("answered unknown_room, its events say already_open"),
            std::string::npos)
      << found->message;
}

TEST(RoomBooksChecker, FiresWhenTheAccessorsAnswerWhatTheEventsDoNot) {
  event_builder log;
  log.decided(rank, core::room_opened{a});
  log.decided(rank, core::room_closed{a, 0, false});
  sim::room_table_read read{rank, {{a, true, true, true, false, 0}}};  // closed yet admitting
  const auto at = log.add(read);
  room_books_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 0's room table answered tracked, admitting, closed, 0 lease(s) pending for room "
      "1/gen 0 at step 3, but its events make it tracked, not admitting, closed, 0 lease(s) "
      "pending",
      {at},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

}  // namespace
}  // namespace kvsim::properties::room_books_checker_test
