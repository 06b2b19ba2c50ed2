#include "properties/use_after_free_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/page_ledger.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::use_after_free_checker_test {
namespace {

using core::lease_role;
using core::page_index;
using core::page_ledger;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request
const room_key request_c{9, 0};

constexpr core::ledger_options historical_release{core::allocation_order::lifo,
                                                  core::release_policy::free_while_leased};

// --- fires ------------------------------------------------------------------------------

TEST(UseAfterFreeChecker, FiresWhenTheOldTransferWritesADestinationPageReallocatedToAnother) {
  event_builder log;
  log.allocated(0, request_a, {5});
  log.allocated(1, request_a, {2});
  log.lease_started(1, 1, request_a, lease_role::destination, {2});
  log.at(29).release_requested(1, request_a, {2}, {});  // freed while leased (B1)
  const auto freed = log.freed(1, request_a, 2);
  const auto reallocated = log.at(35).allocated(1, request_b, {2});
  const auto copy = log.at(41).copied(3, request_a, 0, 5, 1, 2);

  use_after_free_checker checker;
  for (std::size_t i = 0; i < copy; ++i) {
    EXPECT_EQ(checker.observe(log.events()[i], i), std::nullopt) << "event " << i;
  }
  const auto found = checker.observe(log.events()[copy], copy);
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 wrote destination page 2 on rank 1 at step 41, but the "
      "page was freed at step 30 and allocated to room 7/gen 1 at step 35",
      {freed, reallocated, copy},
      {}};
  EXPECT_EQ(found, expected);
}

TEST(UseAfterFreeChecker, FiresOnTheSeedShapeWithTheHistoricalLedgerAndNotWithProduction) {
  // The page-42 corruption end to end on real ledgers: decode releases while prefill's copy is
  // in flight, LIFO hands the page to the next request, the late copy lands in it.
  for (const bool historical : {true, false}) {
    event_builder log;
    page_ledger prefill(0, 4, log);
    page_ledger decode(1, 4, log, historical ? historical_release : core::ledger_options{});
    const auto source = prefill.allocate(request_a, 1).value();                  // step 1
    const auto destination = decode.allocate(request_a, 1).value();              // step 2
    ASSERT_TRUE(decode.lease(request_a, lease_role::destination, destination));  // step 3
    ASSERT_TRUE(prefill.lease(request_a, lease_role::source, source));           // step 4
    ASSERT_TRUE(decode.release_all(request_a));  // step 5, and (historical) page_freed step 6
    ASSERT_TRUE(decode.allocate(request_b, 1));
    const auto copy = log.copied(1, request_a, 0, source[0], 1, destination[0]);

    use_after_free_checker checker;
    const auto found = observe_all(checker, log.events());
    if (!historical) {
      EXPECT_EQ(found, std::nullopt) << found->message;
      continue;
    }
    const sim::finding expected{
        "I1",
        "I1: transfer 1 of room 7/gen 0 wrote destination page 0 on rank 1 at step 8, but the "
        "page was freed at step 6 and allocated to room 7/gen 1 at step 7",
        {5, 6, copy},
        {}};
    EXPECT_EQ(found, expected);
  }
}

TEST(UseAfterFreeChecker, FiresOnACopyIntoAFreedPage) {
  event_builder log;
  log.allocated(0, request_a, {5});
  log.allocated(1, request_a, {2});
  log.at(29).release_requested(1, request_a, {2}, {});
  const auto freed = log.freed(1, request_a, 2);
  const auto copy = log.at(41).copied(3, request_a, 0, 5, 1, 2);

  use_after_free_checker checker;
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 wrote destination page 2 on rank 1 at step 41, but the "
      "page was freed at step 30 and is free",
      {freed, copy},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, FiresOnACopyIntoAPageNeverAllocated) {
  event_builder log;
  log.allocated(0, request_a, {5});
  const auto copy = log.copied(3, request_a, 0, 5, 1, 6);

  use_after_free_checker checker;
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 wrote destination page 6 on rank 1 at step 2, but the "
      "page was never allocated and is free",
      {copy},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, FiresWhenTheSourcePageIsFreedAndReusedWhileTheTransferReadsIt) {
  event_builder log;
  log.allocated(0, request_a, {4});
  log.allocated(1, request_a, {2});
  log.lease_started(0, 1, request_a, lease_role::source, {4});
  log.at(20).release_requested(0, request_a, {4}, {});  // prefill frees on Failed (B3)
  const auto freed = log.freed(0, request_a, 4);
  const auto reallocated = log.allocated(0, request_c, {4});
  const auto copy = log.at(25).copied(3, request_a, 0, 4, 1, 2);

  use_after_free_checker checker;
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 read source page 4 on rank 0 at step 25, but the page "
      "was freed at step 21 and allocated to room 9/gen 0 at step 22",
      {freed, reallocated, copy},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, FiresOnAPageThatAnotherRequestHeldAllAlong) {
  event_builder log;
  log.allocated(0, request_a, {5});
  const auto other = log.allocated(1, request_c, {2});
  const auto copy = log.copied(3, request_a, 0, 5, 1, 2);

  use_after_free_checker checker;
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 wrote destination page 2 on rank 1 at step 3, but the "
      "page was allocated to room 9/gen 0 at step 2",
      {other, copy},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, NamesTheDestinationAndDetailsTheSourceWhenBothEndsAreGone) {
  event_builder log;
  log.allocated(0, request_a, {4});
  log.allocated(1, request_a, {2});
  const auto source_freed = log.at(10).freed(0, request_a, 4);
  const auto destination_freed = log.freed(1, request_a, 2);
  const auto reallocated = log.allocated(1, request_b, {2});
  const auto copy = log.at(20).copied(3, request_a, 0, 4, 1, 2);

  use_after_free_checker checker;
  const sim::finding expected{
      "I1",
      "I1: transfer 3 of room 7/gen 0 wrote destination page 2 on rank 1 at step 20, but the "
      "page was freed at step 11 and allocated to room 7/gen 1 at step 12",
      {source_freed, destination_freed, reallocated, copy},
      {"I1: transfer 3 of room 7/gen 0 read source page 4 on rank 0 at step 20, but the page "
       "was freed at step 10 and is free"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, ReportsLedgerMisuseNamingTheCallAndItsCaller) {
  event_builder log;
  page_ledger decode(1, 4, log);
  const auto pages = decode.allocate(request_a, 1).value();  // step 1
  ASSERT_TRUE(decode.release(request_a, pages));             // steps 2 (request), 3 (freed)
  ASSERT_FALSE(decode.release(request_a, pages));            // step 4: refused

  use_after_free_checker checker;
  const sim::finding expected{
      "misuse",
      "ledger misuse: double_release on rank 1 at step 4 (caller room 7/gen 0, page 0)",
      {3},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(UseAfterFreeChecker, ReportsMisuseOfALeaseIdTheLedgerNeverIssued) {
  event_builder log;
  page_ledger prefill(0, 4, log);
  ASSERT_FALSE(prefill.end_lease(9));

  use_after_free_checker checker;
  const sim::finding expected{
      "misuse",
      "ledger misuse: unknown_lease on rank 0 at step 1 (caller room 0/gen 0, lease 9)",
      {0},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

// --- quiet ------------------------------------------------------------------------------

TEST(UseAfterFreeChecker, StaysQuietOnACopyWhileBothPagesAreOwned) {
  event_builder log;
  log.allocated(0, request_a, {4});
  log.allocated(1, request_a, {2});
  log.lease_started(0, 1, request_a, lease_role::source, {4});
  log.lease_started(1, 1, request_a, lease_role::destination, {2});
  log.copied(3, request_a, 0, 4, 1, 2);
  log.lease_ended(0, 1, request_a, {4});
  log.lease_ended(1, 1, request_a, {2});

  use_after_free_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(UseAfterFreeChecker, StaysQuietWhenReleaseIsDeferredWhileLeasedAndFreedAfterTheLeaseEnds) {
  event_builder log;
  page_ledger prefill(0, 4, log);
  page_ledger decode(1, 4, log);
  const auto source = prefill.allocate(request_a, 2).value();
  const auto destination = decode.allocate(request_a, 2).value();
  const auto read = prefill.lease(request_a, lease_role::source, source).value();
  const auto write = decode.lease(request_a, lease_role::destination, destination).value();
  log.copied(3, request_a, 0, source[0], 1, destination[0]);
  // Abort: both sides release while the copy is still running; the pages retire.
  ASSERT_TRUE(decode.release_all(request_a));
  ASSERT_TRUE(prefill.release_all(request_a));
  EXPECT_EQ(decode.allocate(request_b, 2).value(), (std::vector<page_index>{2, 3}));
  log.copied(3, request_a, 0, source[1], 1, destination[1]);  // retiring pages: still A's
  ASSERT_TRUE(prefill.end_lease(read));
  ASSERT_TRUE(decode.end_lease(write));  // frees A's destination pages
  // The freed pages go to the next request, whose own transfer then writes them.
  const auto reused = decode.allocate(request_c, 1).value();
  const auto c_source = prefill.allocate(request_c, 1).value();
  log.copied(4, request_c, 0, c_source[0], 1, reused[0]);

  use_after_free_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(UseAfterFreeChecker, StaysQuietWhenTheSamePageIndexIsHeldByAnotherRequestOnAnotherRank) {
  event_builder log;
  log.allocated(0, request_c, {2});
  log.allocated(0, request_a, {3});
  log.allocated(1, request_a, {2});
  log.copied(3, request_a, 0, 3, 1, 2);

  use_after_free_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(UseAfterFreeChecker, LeavesPageWritesAndReadsToTheDataChecker) {
  // I1 is about transfers; who wrote which bytes is I7's business (checked on the data).
  event_builder log;
  log.allocated(1, request_a, {2});
  log.add(sim::page_written{1, 2, request_c, 0});
  log.add(sim::page_read{1, 5, request_a, 0, false, request_c});
  log.add(sim::transfer_ended{3, request_a, core::transfer_poll::succeeded});

  use_after_free_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

TEST(UseAfterFreeChecker, TheSameLogGivesTheSameFindingEveryTime) {
  event_builder log;
  log.allocated(0, request_a, {5});
  log.allocated(1, request_a, {2});
  log.freed(1, request_a, 2);
  log.allocated(1, request_b, {2});
  log.copied(3, request_a, 0, 5, 1, 2);

  use_after_free_checker first;
  use_after_free_checker second;
  const auto found = observe_all(first, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(observe_all(second, log.events()), found);
}

}  // namespace
}  // namespace kvsim::properties::use_after_free_checker_test
