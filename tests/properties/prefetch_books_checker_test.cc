// The HiCache coordinator's books: a real abort's reports in order are quiet (an active rank
// drains its completed read and frees as the scheduler, a pending one revokes); a report that
// disagrees with the coordinator's own events, the group's classifications or the storage
// read fires.
#include "properties/prefetch_books_checker.h"

#include <gtest/gtest.h>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::prefetch_books_checker_test {
namespace {

using core::prefetch_state;
using core::room_key;
using testing::event_builder;
using testing::observe_all;
using testing::run_to_quiescence;

const room_key a{20, 0};

// Rank 0 active (its read completed), rank 1 pending: the fixed protocol's events.
void aborted_in_order(event_builder& log, bool read_completed) {
  log.decided(0, core::prefetch_registered{a});
  log.decided(1, core::prefetch_registered{a});
  log.decided(0, core::host_pages_allocated{a, {0, 1}});
  log.decided(0, core::prefetch_lock_taken{a});
  log.decided(0, core::prefetch_classified{a, prefetch_state::active});
  log.decided(1, core::prefetch_classified{a, prefetch_state::pending});
  log.decided(0, core::prefetch_agreed{a, prefetch_state::active});
  log.decided(1, core::prefetch_agreed{a, prefetch_state::active});
  log.decided(1, core::prefetch_erased{a});
  log.decided(1, core::prefetch_revoked{a});
  log.add(sim::storage_read_ended{1, 0, a, read_completed, read_completed ? 2u : 1u});
  log.decided(0, core::prefetch_drained{a, read_completed});
  log.decided(0, core::prefetch_lock_released{a});
  log.decided(0, core::host_pages_freed{a, {0, 1},
                                        read_completed ? core::host_page_owner::scheduler
                                                       : core::host_page_owner::io_thread});
  log.decided(0, core::prefetch_erased{a});
}

TEST(PrefetchBooksChecker, QuietOnTheFixedProtocolsReports) {
  for (const bool completed : {true, false}) {
    event_builder log;
    aborted_in_order(log, completed);
    prefetch_books_checker checker;
    EXPECT_EQ(run_to_quiescence(checker, log.events()), std::nullopt) << completed;
  }
}

TEST(PrefetchBooksChecker, FiresOnAClassificationTheEventsDoNotMake) {
  event_builder log;
  const auto registered = log.decided(0, core::prefetch_registered{a});
  const auto classified = log.decided(0, core::prefetch_classified{a, prefetch_state::active});
  prefetch_books_checker checker;
  const sim::finding expected{"I6",
                              "I6: rank 0's prefetch of room 20/gen 0 was classified active, but "
                              "its events make it pending at step 2",
                              {registered, classified},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(PrefetchBooksChecker, FiresOnAnAgreementAboveWhatTheGroupClassified) {
  event_builder log;
  log.decided(0, core::prefetch_registered{a});
  log.decided(0, core::prefetch_classified{a, prefetch_state::pending});
  log.decided(0, core::prefetch_agreed{a, prefetch_state::active});
  prefetch_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("but the group classified pending at most"), std::string::npos)
      << found->message;
}

TEST(PrefetchBooksChecker, FiresOnALockTakenOnNoRegisteredPrefetch) {
  event_builder log;
  log.decided(0, core::prefetch_lock_taken{a});
  prefetch_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("took its lock while missing"), std::string::npos);
}

TEST(PrefetchBooksChecker, FiresOnADrainReportThatContradictsTheRead) {
  event_builder log;
  log.decided(0, core::prefetch_registered{a});
  log.decided(0, core::prefetch_lock_taken{a});
  log.add(sim::storage_read_ended{1, 0, a, false, 1});
  log.decided(0, core::prefetch_drained{a, true});
  prefetch_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("reported its read drained completed, but the read failed part-way"),
            std::string::npos)
      << found->message;
}

TEST(PrefetchBooksChecker, FiresOnTheWrongOwnerFreeingTheHostPages) {
  event_builder log;
  log.decided(0, core::prefetch_registered{a});
  log.decided(0, core::prefetch_lock_taken{a});
  log.add(sim::storage_read_ended{1, 0, a, true, 2});
  log.decided(0, core::prefetch_drained{a, true});
  log.decided(0, core::host_pages_freed{a, {0, 1}, core::host_page_owner::io_thread});
  prefetch_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("freed by the io_thread after a read that completed"),
            std::string::npos)
      << found->message;
}

TEST(PrefetchBooksChecker, FiresOnAPendingRankThatNeverRevokes) {
  event_builder log;
  log.decided(1, core::prefetch_registered{a});
  const auto classified = log.decided(1, core::prefetch_classified{a, prefetch_state::pending});
  log.decided(1, core::prefetch_agreed{a, prefetch_state::pending});
  log.decided(1, core::prefetch_erased{a});
  prefetch_books_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{classified});
}

TEST(PrefetchBooksChecker, FiresOnARevokeBeforeTheGroupAgreed) {
  event_builder log;
  log.decided(1, core::prefetch_registered{a});
  log.decided(1, core::prefetch_classified{a, prefetch_state::pending});
  log.decided(1, core::prefetch_erased{a});
  log.decided(1, core::prefetch_revoked{a});
  prefetch_books_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("before the group agreed"), std::string::npos);
}

}  // namespace
}  // namespace kvsim::properties::prefetch_books_checker_test
