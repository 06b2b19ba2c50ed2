#include "properties/page_ownership.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <optional>
#include <set>
#include <vector>

#include "core/page_ledger.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::page_ownership_test {
namespace {

using core::lease_id;
using core::lease_role;
using core::page_index;
using core::page_ledger;
using core::rank_id;
using core::room_key;
using testing::event_builder;

const room_key request_a{7, 0};
const room_key request_b{7, 1};

std::vector<lease_id> ids(const lease_set& leases) { return {leases.begin(), leases.end()}; }

page_ownership replay(const event_builder& log) {
  page_ownership view;
  for (std::size_t i = 0; i < log.events().size(); ++i) view.observe(log.events()[i], i);
  return view;
}

TEST(PageOwnership, APageNoLedgerNamedIsFreeWithNoHistory) {
  const page_ownership view;
  const page_view& page = view.page(3, 9);
  EXPECT_EQ(page.owner, std::nullopt);
  EXPECT_FALSE(page.retiring);
  EXPECT_TRUE(page.leases.empty());
  EXPECT_EQ(page.last_allocated, std::nullopt);
  EXPECT_EQ(page.last_freed, std::nullopt);
  EXPECT_TRUE(view.ranks().empty());
}

TEST(PageOwnership, AllocationRecordsTheOwnerAndWhereItHappened) {
  event_builder log;
  log.at(12).allocated(1, request_a, {3, 4});

  const auto view = replay(log);
  EXPECT_EQ(view.owner_of(1, 3), request_a);
  EXPECT_EQ(view.owner_of(1, 4), request_a);
  EXPECT_EQ(view.owner_of(0, 3), std::nullopt) << "ranks are separate pools";
  EXPECT_EQ(view.page(1, 4).last_allocated, (ownership_change{{12, 0}, request_a}));
}

TEST(PageOwnership, AFreeRecordsWhoHadThePageAndAReallocationKeepsTheFree) {
  event_builder log;
  log.allocated(1, request_a, {2});
  log.at(30).freed(1, request_a, 2);
  log.at(35).allocated(1, request_b, {2});

  const auto view = replay(log);
  const page_view& page = view.page(1, 2);
  EXPECT_EQ(page.owner, request_b);
  EXPECT_EQ(page.last_freed, (ownership_change{{30, 1}, request_a}));
  EXPECT_EQ(page.last_allocated, (ownership_change{{35, 2}, request_b}));
}

TEST(PageOwnership, AReleaseWhileLeasedRetiresThePageUntilTheLedgerFreesIt) {
  event_builder log;
  page_ledger decode(1, 4, log);
  const auto pages = decode.allocate(request_a, 1).value();
  const lease_id lease = decode.lease(request_a, lease_role::destination, pages).value();
  ASSERT_TRUE(decode.release_all(request_a));

  auto view = replay(log);
  EXPECT_EQ(view.owner_of(1, pages[0]), request_a);
  EXPECT_TRUE(view.page(1, pages[0]).retiring);
  EXPECT_EQ(ids(view.page(1, pages[0]).leases), (std::vector<lease_id>{lease}));

  ASSERT_TRUE(decode.end_lease(lease));
  view = replay(log);
  EXPECT_EQ(view.owner_of(1, pages[0]), std::nullopt);
  EXPECT_FALSE(view.page(1, pages[0]).retiring);
  EXPECT_TRUE(view.page(1, pages[0]).leases.empty());
  EXPECT_TRUE(view.ranks().at(1).leases.empty());
}

TEST(PageOwnership, AQuarantinedLeaseStaysActiveUntilConfirmed) {
  event_builder log;
  page_ledger decode(0, 4, log);
  const auto pages = decode.allocate(request_a, 2).value();                                // step 1
  const lease_id lease = decode.lease(request_a, lease_role::destination, pages).value();  // 2
  ASSERT_TRUE(decode.quarantine(lease));                                                   // step 3

  auto view = replay(log);
  const lease_view& record = view.ranks().at(0).leases.at(lease);
  EXPECT_TRUE(record.quarantined);
  EXPECT_EQ(record.owner, request_a);
  EXPECT_EQ(record.role, lease_role::destination);
  EXPECT_EQ(record.pages, pages);
  EXPECT_EQ(record.started, (event_mark{2, 1}));
  EXPECT_EQ(record.quarantined_at, (event_mark{3, 2}));

  ASSERT_TRUE(decode.confirm_quarantine(lease));
  view = replay(log);
  EXPECT_TRUE(view.ranks().at(0).leases.empty());
  EXPECT_TRUE(view.page(0, pages[0]).leases.empty());
}

TEST(PageOwnership, AHistoricalFreeWhileLeasedLeavesTheLeaseOnAFreePage) {
  event_builder log;
  page_ledger decode(1, 4, log,
                     {core::allocation_order::lifo, core::release_policy::free_while_leased});
  const auto pages = decode.allocate(request_a, 1).value();
  const lease_id lease = decode.lease(request_a, lease_role::destination, pages).value();
  ASSERT_TRUE(decode.release_all(request_a));

  const auto view = replay(log);
  EXPECT_EQ(view.owner_of(1, pages[0]), std::nullopt);
  EXPECT_EQ(ids(view.page(1, pages[0]).leases), (std::vector<lease_id>{lease}));
  EXPECT_EQ(view.ranks().at(1).leases.size(), 1u);
}

TEST(PageOwnership, OnlyLedgerDecisionsChangeTheView) {
  event_builder log;
  log.decided(0, core::room_opened{request_a});
  log.decided(0, core::ledger_misuse{core::ledger_error::double_release, request_a, 2, {}});
  log.decided(0, core::allocation_refused{request_a, 9, 4});
  log.copied(3, request_a, 0, 2, 1, 2);
  log.add(sim::page_written{1, 2, request_a, 0});

  EXPECT_TRUE(replay(log).ranks().empty());
}

TEST(PageOwnership, LeaseIdsAreKeptPerRank) {
  event_builder log;
  log.allocated(0, request_a, {0});
  log.allocated(1, request_b, {0});
  log.lease_started(0, 1, request_a, lease_role::source, {0});
  log.lease_started(1, 1, request_b, lease_role::destination, {0});
  log.lease_ended(0, 1, request_a, {0});

  const auto view = replay(log);
  EXPECT_TRUE(view.ranks().at(0).leases.empty());
  ASSERT_EQ(view.ranks().at(1).leases.size(), 1u);
  EXPECT_EQ(view.ranks().at(1).leases.at(1).owner, request_b);
  EXPECT_EQ(ids(view.page(1, 0).leases), (std::vector<lease_id>{1}));
}

// The replay agrees with the ledger that wrote the events after every call, whatever calls
// it was given (refused ones included), under both release policies and on two ranks at once.
constexpr std::uint32_t pool_pages = 5;

// Uniform in [low, high) at every size: inRange alone shrinks its range with the test size,
// which would make the early runs allocate-only.
template <class T>
T pick(T low, T high) {
  return *rc::gen::resize(100, rc::gen::inRange<T>(low, high));
}

void assert_view_matches(const page_ownership& view, const std::array<page_ledger, 2>& ledgers) {
  for (rank_id rank = 0; rank < 2; ++rank) {
    std::uint32_t live_leases = 0;
    if (const auto it = view.ranks().find(rank); it != view.ranks().end()) {
      live_leases = static_cast<std::uint32_t>(it->second.leases.size());
    }
    RC_ASSERT(live_leases == ledgers[rank].active_lease_count());
    for (page_index p = 0; p < pool_pages; ++p) {
      const page_view& page = view.page(rank, p);
      RC_ASSERT(page.owner == ledgers[rank].owner_of(p));
      RC_ASSERT(page.retiring == ledgers[rank].is_retiring(p));
      RC_ASSERT(page.leases.size() == ledgers[rank].lease_count(p));
    }
  }
}

void check_view_matches_ledgers(core::release_policy policy) {
  const std::vector<room_key> owners{{1, 0}, {1, 1}, {2, 0}};
  event_builder log;
  const core::ledger_options options{core::allocation_order::lifo, policy};
  std::array<page_ledger, 2> ledgers{page_ledger(0, pool_pages, log, options),
                                     page_ledger(1, pool_pages, log, options)};
  std::array<std::vector<lease_id>, 2> issued;
  page_ownership view;
  std::size_t replayed = 0;

  const auto calls = pick<std::size_t>(1, 60);
  for (std::size_t call = 0; call < calls; ++call) {
    const rank_id rank = pick<rank_id>(0, 2);
    page_ledger& ledger = ledgers[rank];
    const room_key owner = owners[pick<std::size_t>(0, owners.size())];
    // Mostly some of the pages the owner holds (so that calls succeed), sometimes anything.
    std::vector<page_index> pages;
    for (page_index p : ledger.pages_of(owner)) {
      if (!ledger.is_retiring(p) && pick(0, 3) != 0) pages.push_back(p);
    }
    if (pages.empty() || pick(0, 5) == 0) {
      pages =
          *rc::gen::container<std::vector<page_index>>(rc::gen::inRange<page_index>(0, pool_pages));
    }
    const lease_id lease =
        issued[rank].empty() ? 1 : issued[rank][pick<std::size_t>(0, issued[rank].size())];
    switch (pick(0, 7)) {
      case 0:
        (void)ledger.allocate(owner, pick<std::uint32_t>(0, 3));
        break;
      case 1:
        if (auto id = ledger.lease(
                owner, *rc::gen::element(lease_role::source, lease_role::destination), pages)) {
          issued[rank].push_back(id.value());
        }
        break;
      case 2:
        (void)ledger.end_lease(lease);
        break;
      case 3:
        (void)ledger.quarantine(lease);
        break;
      case 4:
        (void)ledger.confirm_quarantine(lease);
        break;
      case 5:
        (void)ledger.release(owner, pages);
        break;
      default:
        (void)ledger.release_all(owner);
        break;
    }
    for (; replayed < log.events().size(); ++replayed) {
      view.observe(log.events()[replayed], replayed);
    }
    assert_view_matches(view, ledgers);
  }
}

RC_GTEST_PROP(PageOwnership, ReplayAgreesWithTheProductionLedgerAfterAnyCalls, ()) {
  check_view_matches_ledgers(core::release_policy::defer_while_leased);
}

RC_GTEST_PROP(PageOwnership, ReplayAgreesWithTheHistoricalLedgerAfterAnyCalls, ()) {
  check_view_matches_ledgers(core::release_policy::free_while_leased);
}

}  // namespace
}  // namespace kvsim::properties::page_ownership_test
