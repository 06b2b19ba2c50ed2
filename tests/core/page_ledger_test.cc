#include "core/page_ledger.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/recording_sink.h"

namespace kvsim::core::page_ledger_test {
namespace {

using testing::recording_sink;

const room_key request_a{7, 0};
const room_key request_b{7, 1};
const room_key request_c{9, 0};

// Everything observable about a ledger, to prove that a refused call changed nothing.
struct ledger_snapshot {
  std::vector<std::optional<room_key>> owners;
  std::vector<std::uint32_t> lease_counts;
  std::vector<bool> retiring;
  std::uint32_t free = 0;
  std::uint32_t active_leases = 0;
  std::uint32_t quarantined_pages = 0;
  bool operator==(const ledger_snapshot&) const = default;
};

ledger_snapshot snapshot(const page_ledger& ledger) {
  ledger_snapshot s;
  for (page_index p = 0; p < ledger.pages_total(); ++p) {
    s.owners.push_back(ledger.owner_of(p));
    s.lease_counts.push_back(ledger.lease_count(p));
    s.retiring.push_back(ledger.is_retiring(p));
  }
  s.free = ledger.free_count();
  s.active_leases = ledger.active_lease_count();
  s.quarantined_pages = ledger.quarantined_page_count();
  return s;
}

TEST(PageLedger, LifoHandsOutTheMostRecentlyFreedPageFirst) {
  recording_sink sink;
  page_ledger ledger(0, 8, sink);
  const auto first = ledger.allocate(request_a, 2).value();
  EXPECT_EQ(first, (std::vector<page_index>{0, 1}));
  ASSERT_TRUE(ledger.release(request_a, std::vector<page_index>{1}));
  EXPECT_EQ(ledger.allocate(request_b, 1).value(), (std::vector<page_index>{1}));
}

TEST(PageLedger, FifoHandsOutTheLongestFreePageFirst) {
  recording_sink sink;
  page_ledger ledger(0, 4, sink, {allocation_order::fifo, release_policy::defer_while_leased});
  ASSERT_EQ(ledger.allocate(request_a, 1).value(), (std::vector<page_index>{0}));
  ASSERT_TRUE(ledger.release(request_a, std::vector<page_index>{0}));
  EXPECT_EQ(ledger.allocate(request_b, 4).value(), (std::vector<page_index>{1, 2, 3, 0}));
}

TEST(PageLedger, ReleaseWhileLeasedRetiresUntilTheLastLeaseEnds) {
  recording_sink sink;
  page_ledger ledger(0, 4, sink);
  const auto pages = ledger.allocate(request_a, 2).value();
  const lease_id read = ledger.lease(request_a, lease_role::source, pages).value();
  const lease_id sibling = ledger.lease(request_a, lease_role::source, pages).value();
  ASSERT_TRUE(ledger.release_all(request_a));
  EXPECT_EQ(ledger.retiring_count(), 2u);
  EXPECT_EQ(ledger.free_count(), 2u);
  EXPECT_EQ(sink.last<release_requested>()->deferred, pages);

  // Another request cannot get the retiring pages.
  EXPECT_EQ(ledger.allocate(request_b, 2).value(), (std::vector<page_index>{2, 3}));
  ASSERT_TRUE(ledger.end_lease(read));
  EXPECT_EQ(ledger.retiring_count(), 2u) << "one sibling still reads the pages";
  ASSERT_TRUE(ledger.end_lease(sibling));
  EXPECT_EQ(ledger.retiring_count(), 0u);
  EXPECT_EQ(ledger.free_count(), 2u);
  EXPECT_EQ(sink.count<page_freed>(), 2u);
  EXPECT_TRUE(ledger.check_consistency().empty());
}

TEST(PageLedger, QuarantinedPagesStayOutOfCirculationUntilConfirmed) {
  recording_sink sink;
  page_ledger ledger(0, 2, sink);
  const auto pages = ledger.allocate(request_a, 2).value();
  const lease_id copy = ledger.lease(request_a, lease_role::destination, pages).value();
  ASSERT_TRUE(ledger.quarantine(copy));
  ASSERT_TRUE(ledger.release_all(request_a));
  EXPECT_EQ(ledger.quarantined_page_count(), 2u);
  EXPECT_EQ(ledger.allocate(request_b, 1).error(), ledger_error::not_enough_free_pages);
  EXPECT_EQ(ledger.end_lease(copy).error(), ledger_error::lease_quarantined);
  ASSERT_TRUE(ledger.confirm_quarantine(copy));
  EXPECT_EQ(ledger.free_count(), 2u);
  EXPECT_EQ(sink.count<quarantine_confirmed>(), 1u);
  EXPECT_TRUE(ledger.check_consistency().empty());
}

TEST(PageLedger, HistoricalFreeWhileLeasedHandsALeasedPageToTheNextRequest) {
  recording_sink sink;
  page_ledger ledger(0, 4, sink, {allocation_order::lifo, release_policy::free_while_leased});
  const auto pages = ledger.allocate(request_a, 1).value();
  ASSERT_TRUE(ledger.lease(request_a, lease_role::destination, pages));
  ASSERT_TRUE(ledger.release_all(request_a));
  EXPECT_EQ(ledger.allocate(request_b, 1).value(), pages) << "LIFO reuse of the leased page";
  EXPECT_FALSE(ledger.check_consistency().empty());
}

TEST(PageLedger, AllocationBeyondTheFreePoolIsBackPressureNotMisuse) {
  recording_sink sink;
  page_ledger ledger(0, 2, sink);
  const auto before = snapshot(ledger);
  EXPECT_EQ(ledger.allocate(request_a, 3).error(), ledger_error::not_enough_free_pages);
  EXPECT_EQ(snapshot(ledger), before);
  EXPECT_EQ(sink.count<allocation_refused>(), 1u);
  EXPECT_EQ(sink.count<ledger_misuse>(), 0u);
}

// --- misuse: each returns its error, changes nothing, and is emitted --------------------

class PageLedgerMisuse : public ::testing::Test {
 protected:
  void SetUp() override {
    pages_a = ledger.allocate(request_a, 2).value();
    pages_c = ledger.allocate(request_c, 1).value();
    lease_a = ledger.lease(request_a, lease_role::source, std::vector<page_index>{pages_a[0]})
                  .value();
    sink.clear();
    before = snapshot(ledger);
  }

  // The refusal left every observable unchanged and produced exactly one misuse event.
  void expect_refused_without_change(ledger_error error) {
    EXPECT_EQ(snapshot(ledger), before);
    ASSERT_EQ(sink.size(), 1u);
    const auto misuse = sink.last<ledger_misuse>();
    ASSERT_TRUE(misuse.has_value());
    EXPECT_EQ(misuse->error, error);
    EXPECT_TRUE(ledger.check_consistency().empty());
  }

  recording_sink sink;
  page_ledger ledger{3, 6, sink};
  std::vector<page_index> pages_a;
  std::vector<page_index> pages_c;
  lease_id lease_a = 0;
  ledger_snapshot before;
};

TEST_F(PageLedgerMisuse, DoubleFreeOfAFreePage) {
  const std::vector<page_index> free_page{5};
  EXPECT_EQ(ledger.release(request_a, free_page).error(), ledger_error::double_release);
  expect_refused_without_change(ledger_error::double_release);
}

TEST_F(PageLedgerMisuse, DoubleReleaseOfARetiringPage) {
  ASSERT_TRUE(ledger.release(request_a, std::vector<page_index>{pages_a[0]}));
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.release(request_a, std::vector<page_index>{pages_a[0]}).error(),
            ledger_error::double_release);
  expect_refused_without_change(ledger_error::double_release);
}

TEST_F(PageLedgerMisuse, ReleasingAnotherOwnersPage) {
  EXPECT_EQ(ledger.release(request_a, pages_c).error(), ledger_error::not_owner);
  expect_refused_without_change(ledger_error::not_owner);
  EXPECT_EQ(sink.last<ledger_misuse>()->page, pages_c[0]);
}

TEST_F(PageLedgerMisuse, ReleaseIsAllOrNothing) {
  // The first page is A's, the second is C's: nothing is released.
  const std::vector<page_index> mixed{pages_a[1], pages_c[0]};
  EXPECT_EQ(ledger.release(request_a, mixed).error(), ledger_error::not_owner);
  expect_refused_without_change(ledger_error::not_owner);
}

TEST_F(PageLedgerMisuse, SameGenerationOnlyOwnsItsPages) {
  // Room 7 generation 1 is a different request from room 7 generation 0.
  EXPECT_EQ(ledger.release(request_b, pages_a).error(), ledger_error::not_owner);
  expect_refused_without_change(ledger_error::not_owner);
}

TEST_F(PageLedgerMisuse, LeaseUnderflowEndingALeaseTwice) {
  ASSERT_TRUE(ledger.end_lease(lease_a));
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.end_lease(lease_a).error(), ledger_error::lease_underflow);
  expect_refused_without_change(ledger_error::lease_underflow);
}

TEST_F(PageLedgerMisuse, EndingAnUnknownLease) {
  EXPECT_EQ(ledger.end_lease(lease_a + 100).error(), ledger_error::unknown_lease);
  expect_refused_without_change(ledger_error::unknown_lease);
  EXPECT_EQ(sink.last<ledger_misuse>()->lease, lease_a + 100);
}

TEST_F(PageLedgerMisuse, EndingLeaseZero) {
  EXPECT_EQ(ledger.end_lease(0).error(), ledger_error::unknown_lease);
  expect_refused_without_change(ledger_error::unknown_lease);
}

TEST_F(PageLedgerMisuse, LeasingAFreePage) {
  EXPECT_EQ(ledger.lease(request_a, lease_role::destination, std::vector<page_index>{5}).error(),
            ledger_error::page_not_owned);
  expect_refused_without_change(ledger_error::page_not_owned);
}

TEST_F(PageLedgerMisuse, LeasingAnotherOwnersPage) {
  EXPECT_EQ(ledger.lease(request_a, lease_role::source, pages_c).error(), ledger_error::not_owner);
  expect_refused_without_change(ledger_error::not_owner);
}

TEST_F(PageLedgerMisuse, LeasingARetiringPage) {
  ASSERT_TRUE(ledger.release(request_a, std::vector<page_index>{pages_a[0]}));
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.lease(request_a, lease_role::source, std::vector<page_index>{pages_a[0]})
                .error(),
            ledger_error::page_retiring);
  expect_refused_without_change(ledger_error::page_retiring);
}

TEST_F(PageLedgerMisuse, PageOutOfRange) {
  EXPECT_EQ(ledger.release(request_a, std::vector<page_index>{6}).error(),
            ledger_error::page_out_of_range);
  expect_refused_without_change(ledger_error::page_out_of_range);
}

TEST_F(PageLedgerMisuse, DuplicatePageInOneCall) {
  const std::vector<page_index> twice{pages_a[1], pages_a[1]};
  EXPECT_EQ(ledger.release(request_a, twice).error(), ledger_error::duplicate_page);
  expect_refused_without_change(ledger_error::duplicate_page);
}

TEST_F(PageLedgerMisuse, EmptyRequests) {
  EXPECT_EQ(ledger.allocate(request_a, 0).error(), ledger_error::empty_request);
  expect_refused_without_change(ledger_error::empty_request);
  sink.clear();
  EXPECT_EQ(ledger.lease(request_a, lease_role::source, {}).error(),
            ledger_error::empty_request);
  expect_refused_without_change(ledger_error::empty_request);
}

TEST_F(PageLedgerMisuse, QuarantiningTwice) {
  ASSERT_TRUE(ledger.quarantine(lease_a));
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.quarantine(lease_a).error(), ledger_error::lease_quarantined);
  expect_refused_without_change(ledger_error::lease_quarantined);
}

TEST_F(PageLedgerMisuse, ConfirmingALeaseThatWasNotQuarantined) {
  EXPECT_EQ(ledger.confirm_quarantine(lease_a).error(), ledger_error::lease_not_quarantined);
  expect_refused_without_change(ledger_error::lease_not_quarantined);
}

// --- allocate_exact: the pages a logged allocator handed out ---------------------------

TEST(PageLedgerExact, TakesExactlyThePagesNamedInTheirOrderAndEmitsAnAllocation) {
  recording_sink sink;
  page_ledger ledger(0, 8, sink);
  const std::vector<page_index> pinned{5, 3, 4};
  EXPECT_EQ(ledger.allocate_exact(request_a, pinned).value(), pinned);
  for (page_index page : pinned) EXPECT_EQ(ledger.owner_of(page), request_a);
  EXPECT_EQ(ledger.pages_of(request_a), (std::vector<page_index>{3, 4, 5}));
  EXPECT_EQ(ledger.free_count(), 5u);
  ASSERT_EQ(sink.size(), 1u) << "one event, as allocate emits";
  const auto allocated = sink.last<pages_allocated>();
  ASSERT_TRUE(allocated.has_value());
  EXPECT_EQ(allocated->owner, request_a);
  EXPECT_EQ(allocated->pages, pinned);
  EXPECT_TRUE(allocated->exact) << "the ledger audit must not judge named pages by the order";
  EXPECT_TRUE(ledger.check_consistency().empty());
  EXPECT_EQ(ledger.allocate(request_b, 1).value().size(), 1u);
  EXPECT_FALSE(sink.last<pages_allocated>()->exact) << "an ordinary allocation is not exact";
}

// The pages left on the free list come out in the order they would have without the exact
// allocation, LIFO and FIFO alike.
TEST(PageLedgerExact, LeavesTheOrderOfTheRemainingFreePagesAlone) {
  for (const allocation_order order : {allocation_order::lifo, allocation_order::fifo}) {
    recording_sink sink;
    page_ledger ledger(0, 6, sink, {order, release_policy::defer_while_leased});
    ASSERT_TRUE(ledger.allocate(request_c, 6));
    ASSERT_TRUE(ledger.release(request_c, std::vector<page_index>{3}));
    ASSERT_TRUE(ledger.release(request_c, std::vector<page_index>{0}));
    ASSERT_TRUE(ledger.release(request_c, std::vector<page_index>{5}));
    ASSERT_TRUE(ledger.release(request_c, std::vector<page_index>{1}));
    // Freed 3, 0, 5, 1: take 0 out of the middle.
    ASSERT_TRUE(ledger.allocate_exact(request_a, std::vector<page_index>{0}));
    const std::vector<page_index> rest = ledger.allocate(request_b, 3).value();
    if (order == allocation_order::lifo) {
      EXPECT_EQ(rest, (std::vector<page_index>{1, 5, 3}));
    } else {
      EXPECT_EQ(rest, (std::vector<page_index>{3, 5, 1}));
    }
    EXPECT_TRUE(ledger.check_consistency().empty());
  }
}

TEST(PageLedgerExact, APageFreedAgainCanBeTakenExactlyAgain) {
  recording_sink sink;
  page_ledger ledger(0, 4, sink);
  ASSERT_TRUE(ledger.allocate_exact(request_a, std::vector<page_index>{2}));
  const lease_id copy =
      ledger.lease(request_a, lease_role::destination, std::vector<page_index>{2}).value();
  ASSERT_TRUE(ledger.release_all(request_a));
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{2}).error(),
            ledger_error::page_not_free)
      << "retiring while the copy still writes it";
  ASSERT_TRUE(ledger.end_lease(copy));
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{2}).value(),
            (std::vector<page_index>{2}));
  EXPECT_TRUE(ledger.check_consistency().empty());
}

TEST_F(PageLedgerMisuse, ExactAllocationOfNoPage) {
  EXPECT_EQ(ledger.allocate_exact(request_b, {}).error(), ledger_error::empty_request);
  expect_refused_without_change(ledger_error::empty_request);
}

TEST_F(PageLedgerMisuse, ExactAllocationPastThePool) {
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{4, 6}).error(),
            ledger_error::page_out_of_range);
  expect_refused_without_change(ledger_error::page_out_of_range);
  EXPECT_EQ(sink.last<ledger_misuse>()->page, page_index{6});
}

TEST_F(PageLedgerMisuse, ExactAllocationNamingAPageTwice) {
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{4, 5, 4}).error(),
            ledger_error::duplicate_page);
  expect_refused_without_change(ledger_error::duplicate_page);
  EXPECT_EQ(sink.last<ledger_misuse>()->page, page_index{4});
}

// All or nothing: free page 3 is not taken because page 1 (request A's) is not free.
TEST_F(PageLedgerMisuse, ExactAllocationOfAnOwnedPage) {
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{3, pages_a[1]}).error(),
            ledger_error::page_not_free);
  expect_refused_without_change(ledger_error::page_not_free);
  const auto misuse = sink.last<ledger_misuse>();
  EXPECT_EQ(misuse->caller, request_b);
  EXPECT_EQ(misuse->page, pages_a[1]);
}

TEST_F(PageLedgerMisuse, ExactAllocationOfARetiringPage) {
  ASSERT_TRUE(ledger.release(request_a, std::vector<page_index>{pages_a[0]}));  // leased: retires
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{pages_a[0]}).error(),
            ledger_error::page_not_free);
  expect_refused_without_change(ledger_error::page_not_free);
}

TEST_F(PageLedgerMisuse, ExactAllocationOfAQuarantinedPage) {
  ASSERT_TRUE(ledger.quarantine(lease_a));
  ASSERT_TRUE(ledger.release_all(request_a));
  sink.clear();
  before = snapshot(ledger);
  EXPECT_EQ(ledger.allocate_exact(request_b, std::vector<page_index>{pages_a[0]}).error(),
            ledger_error::page_not_free);
  expect_refused_without_change(ledger_error::page_not_free);
}

TEST(PageLedgerConsistency, ReportsAFreePageThatIsStillLeased) {
  recording_sink sink;
  page_ledger ledger(0, 2, sink, {allocation_order::lifo, release_policy::free_while_leased});
  const auto pages = ledger.allocate(request_a, 1).value();
  ASSERT_TRUE(ledger.lease(request_a, lease_role::destination, pages));
  ASSERT_TRUE(ledger.release_all(request_a));
  const auto problems = ledger.check_consistency();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("is free while 1 lease(s) still reference it"), std::string::npos)
      << problems[0];
}

}  // namespace
}  // namespace kvsim::core::page_ledger_test
