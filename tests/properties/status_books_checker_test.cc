// The status table's books (I4): reads that match the table's own events are quiet, whatever
// the statuses were (a real table's log included); a read or a change that disagrees with
// them fires, with the event that set the status as evidence.
#include "properties/status_books_checker.h"

#include <gtest/gtest.h>

#include "core/transfer_status_table.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::status_books_checker_test {
namespace {

using core::kv_status;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key a{7, 0};

TEST(StatusBooksChecker, QuietWhenReadsMatchARealTablesEvents) {
  event_builder log;
  core::transfer_status_table table(0, log);
  log.add(sim::status_read{0, a, table.get(a)});
  table.update(a, kv_status::bootstrapping);
  log.add(sim::status_read{0, a, table.get(a)});
  table.update(a, kv_status::transferring);
  table.update(a, kv_status::failed);
  table.update(a, kv_status::transferring);  // ignored: Failed is final
  log.add(sim::status_read{0, a, table.get(a)});
  table.erase(a);
  log.add(sim::status_read{0, a, table.get(a)});
  status_books_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(StatusBooksChecker, FiresOnAReadTheEventsNeverGave) {
  event_builder log;
  const auto failed = log.decided(0, core::status_changed{a, std::nullopt, kv_status::failed});
  const auto read = log.add(sim::status_read{0, a, kv_status::transferring});
  status_books_checker checker;
  const sim::finding expected{"I4",
                              "I4: rank 0's status table answered Transferring for room 7/gen 0 "
                              "at step 2, but its events gave it Failed",
                              {failed, read},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(StatusBooksChecker, FiresOnAStatusKeptAfterItWasForgotten) {
  event_builder log;
  log.decided(0, core::status_changed{a, std::nullopt, kv_status::bootstrapping});
  const auto forgotten = log.decided(0, core::status_forgotten{a});
  const auto read = log.add(sim::status_read{0, a, kv_status::bootstrapping});
  status_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{forgotten, read}));
}

TEST(StatusBooksChecker, FiresOnAChangeFromAStatusTheEventsDidNotLeave) {
  event_builder log;
  log.decided(0, core::status_changed{a, std::nullopt, kv_status::bootstrapping});
  log.decided(0, core::status_changed{a, kv_status::transferring, kv_status::failed});
  status_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I4: rank 0 changed the status of room 7/gen 0 from Transferring at step 2, but its "
            "events had left Bootstrapping");
}

}  // namespace
}  // namespace kvsim::properties::status_books_checker_test

namespace kvsim::properties::status_books_checker_test {
namespace {

const room_key b{8, 0};

TEST(StatusBooksChecker, FiresWhenTheBooksLagBehindTheRoomsLife) {
  // A table that refused the step forward (Bootstrapping to Transferring) answers what its
  // events say, but the room had admitted a chunk: the books are consistent and wrong.
  event_builder log;
  log.decided(0, core::room_opened{b});
  log.decided(0, core::status_changed{b, std::nullopt, kv_status::bootstrapping});
  const auto admitted = log.decided(0, core::chunk_admitted{b, 1});
  const auto read = log.at(9).add(sim::status_read{0, b, kv_status::bootstrapping});
  status_books_checker checker;
  const sim::finding expected{
      "I4",
      "I4: rank 0's status table answered Bootstrapping for room 8/gen 0 at step 9, but the "
      "room had admitted a chunk (Transferring expected)",
      {admitted, read},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(StatusBooksChecker, FiresWhenAClosedRoomIsNotFailed) {
  event_builder log;
  log.decided(0, core::room_opened{b});
  log.decided(0, core::status_changed{b, std::nullopt, kv_status::bootstrapping});
  log.decided(0, core::chunk_admitted{b, 1});
  log.decided(0, core::status_changed{b, kv_status::bootstrapping, kv_status::transferring});
  log.decided(0, core::room_closed{b, 1, false});
  log.add(sim::status_read{0, b, kv_status::transferring});
  status_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->invariant, "I4");
}

TEST(StatusBooksChecker, QuietWhenATransferFailsWithoutAClose) {
  event_builder log;
  log.decided(0, core::room_opened{b});
  log.decided(0, core::status_changed{b, std::nullopt, kv_status::bootstrapping});
  log.decided(0, core::chunk_admitted{b, 1});
  log.decided(0, core::status_changed{b, kv_status::bootstrapping, kv_status::failed});
  log.add(sim::status_read{0, b, kv_status::failed});
  log.decided(0, core::room_cleared{b});
  log.add(sim::status_read{0, b, kv_status::failed});  // the books' rule judges this one
  status_books_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

// --- the table's reports and the late writes it answers ----------------------------------

// Every late write kind the world draws, through the production table, answered and reported
// as its rules say.
TEST(StatusBooksChecker, QuietOnLateWritesThroughARealTable) {
  event_builder log;
  core::transfer_status_table table(0, log);
  const auto write = [&](kv_status status) {
    const auto answer = table.update(a, status);
    log.add(sim::status_written{0, a, status, answer == core::status_update::applied});
  };
  write(kv_status::failed);         // absent room: ignored
  write(kv_status::bootstrapping);  // applied
  write(kv_status::bootstrapping);  // unchanged
  write(kv_status::transferring);   // applied
  write(kv_status::waiting_for_input);  // regression
  write(kv_status::failed);         // applied
  write(kv_status::success);        // terminal
  status_books_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(StatusBooksChecker, FiresOnAChangeToTheSameStatus) {
  event_builder log;
  log.decided(0, core::status_changed{a, std::nullopt, kv_status::transferring});
  log.decided(0, core::status_changed{a, kv_status::transferring, kv_status::transferring});
  status_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->message,
            "I4: rank 0 changed the status of room 7/gen 0 from Transferring to itself at step 2, "
            "a change that changes nothing");
}

TEST(StatusBooksChecker, FiresOnAnIgnoreThatNamesTheAttemptAsTheCurrentStatus) {
  event_builder log;
  log.decided(0, core::status_changed{a, std::nullopt, kv_status::failed});
  log.decided(0, core::status_update_ignored{a, kv_status::transferring, kv_status::failed,
                                             core::status_ignore_reason::terminal});
  status_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("while its status was Transferring, but its events gave it Failed"),
            std::string::npos)
      << found->message;
}

TEST(StatusBooksChecker, FiresOnAnIgnoreForTheWrongReasonOrOfAnUpdateTheRulesApply) {
  event_builder log;
  log.decided(0, core::status_changed{a, std::nullopt, kv_status::waiting_for_input});
  log.decided(0, core::status_update_ignored{a, kv_status::waiting_for_input,
                                             kv_status::bootstrapping,
                                             core::status_ignore_reason::unchanged});
  status_books_checker checker;
  auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("where the rules say regression"), std::string::npos)
      << found->message;

  event_builder forward;
  forward.decided(0, core::status_changed{a, std::nullopt, kv_status::bootstrapping});
  forward.decided(0, core::status_update_ignored{a, kv_status::bootstrapping,
                                                 kv_status::transferring,
                                                 core::status_ignore_reason::regression});
  status_books_checker second;
  found = observe_all(second, forward.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("an update the table's rules apply"), std::string::npos);
}

TEST(StatusBooksChecker, FiresOnALateWriteTheTableDidNotReport) {
  event_builder log;
  const auto set = log.decided(0, core::status_changed{a, std::nullopt, kv_status::failed});
  const auto write = log.add(sim::status_written{0, a, kv_status::transferring, false});
  status_books_checker checker;
  const sim::finding expected{"I4",
                              "I4: rank 0's status table ignored a late Transferring for room "
                              "7/gen 0 at step 2 but its last decision reported no such refusal",
                              {set, write},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

}  // namespace
}  // namespace kvsim::properties::status_books_checker_test
