// The ledger audit (I8, the books): a real ledger's audit agrees with its own events whatever
// it did; an audit that disagrees with the events (a count, an owner, a lease count, a
// retiring flag, pages_of, or the ledger's own consistency check) is a finding naming it.
#include "properties/ledger_audit_checker.h"

#include <gtest/gtest.h>

#include "core/page_ledger.h"
#include "scenarios/core_audit.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::ledger_audit_checker_test {
namespace {

using core::lease_role;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key a{7, 0};
const room_key b{7, 1};

// A real ledger that allocated, leased, released while leased (retiring) and quarantined.
struct busy_ledger {
  event_builder log;
  core::page_ledger ledger{1, 6, log};
  busy_ledger() {
    (void)ledger.allocate(a, 2);
    const auto pages_b = ledger.allocate(b, 3).value();
    const auto lease = ledger.lease(b, lease_role::destination, pages_b).value();
    (void)ledger.release_all(b);  // retiring: still leased
    const auto a_pages = ledger.pages_of(a);
    const auto a_lease = ledger.lease(a, lease_role::source, a_pages).value();
    (void)ledger.quarantine(a_lease);
    (void)lease;
  }
  sim::ledger_audited audit() const { return scenarios::audit_ledger(1, ledger, {a, b}); }
};

TEST(LedgerAuditChecker, ARealLedgerAgreesWithItsOwnEvents) {
  busy_ledger busy;
  busy.log.add(busy.audit());
  ledger_audit_checker checker;
  EXPECT_EQ(observe_all(checker, busy.log.events()), std::nullopt);
}

TEST(LedgerAuditChecker, FiresOnEveryKindOfDisagreement) {
  const auto fires_on = [](auto edit, const std::string& problem) {
    busy_ledger busy;
    sim::ledger_audited audit = busy.audit();
    edit(audit);
    const auto at = busy.log.add(audit);
    ledger_audit_checker checker;
    const auto found = observe_all(checker, busy.log.events());
    ASSERT_TRUE(found.has_value()) << problem;
    EXPECT_EQ(found->invariant, "I8");
    EXPECT_EQ(found->evidence, std::vector<std::size_t>{at});
    EXPECT_NE(found->message.find(problem), std::string::npos) << found->message;
  };
  fires_on([](sim::ledger_audited& x) { ++x.free_pages; }, "free pages 2, the events say 1");
  fires_on([](sim::ledger_audited& x) { --x.owned_pages; }, "owned pages 1, the events say 2");
  fires_on([](sim::ledger_audited& x) { x.retiring_pages = 0; },
           "retiring pages 0, the events say 3");
  fires_on([](sim::ledger_audited& x) { ++x.leased_pages; }, "leased pages 6, the events say 5");
  fires_on([](sim::ledger_audited& x) { x.quarantined_pages = 0; },
           "quarantined pages 0, the events say 2");
  fires_on([](sim::ledger_audited& x) { x.active_leases = 1; },
           "active leases 1, the events say 2");
  fires_on([](sim::ledger_audited& x) { x.owned.erase(x.owned.begin()); },
           "reported free, the events say");
  fires_on([](sim::ledger_audited& x) { x.owned.front().owner = b; },
           "reported owned by room 7/gen 1, the events say room 7/gen 0");
  fires_on([](sim::ledger_audited& x) { x.owned.front().leases = 0; },
           "reported with 0 lease(s), the events say 1");
  fires_on([](sim::ledger_audited& x) { x.owned.back().retiring = false; },
           "reported not retiring, the events say retiring");
  fires_on(
      [](sim::ledger_audited& x) {
        x.owned.push_back({5, a, 0, false});
      },
      "page 5 reported owned by room 7/gen 0, the events say it is free");
  fires_on([](sim::ledger_audited& x) { x.pages_of.front().second.pop_back(); },
           "pages of room 7/gen 0 reported");
  const std::vector<std::string> broken{"free list holds page 3 twice"};
  fires_on([&](sim::ledger_audited& x) { x.inconsistencies = broken; }, broken.front());
  fires_on([](sim::ledger_audited& x) { x.beyond_pool.front().leases = 1; },
           "page 6, past the pool of 6, reported free with 1 lease(s)");
  fires_on([](sim::ledger_audited& x) { x.beyond_pool.back().owner = a; },
           "reported owned by room 7/gen 0 with 0 lease(s)");
}

// --- the events agree with each other as they happen -----------------------------------

// A real ledger of `order` from its creation on: quiet, whatever it allocates and frees.
void expect_quiet_from_creation(core::allocation_order order) {
  event_builder log;
  log.add(sim::ledger_created{1, 5, order});
  core::page_ledger ledger(1, 5, log, core::ledger_options{order, core::release_policy::defer_while_leased});
  const auto first = ledger.allocate(a, 3).value();
  const std::vector<core::page_index> two{first[2], first[0]};
  (void)ledger.release(a, two);
  (void)ledger.allocate(b, 3);
  log.add(scenarios::audit_ledger(1, ledger, {a, b}));
  ledger_audit_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(LedgerAuditChecker, QuietOnARealLedgerOfEitherOrder) {
  expect_quiet_from_creation(core::allocation_order::lifo);
  expect_quiet_from_creation(core::allocation_order::fifo);
}

TEST(LedgerAuditChecker, FiresOnAnAllocationTheFreeListDoesNotHandOut) {
  // LIFO: page 1 freed last must come first; a ledger that hands out page 3 lost its order.
  event_builder log;
  log.add(sim::ledger_created{1, 4, core::allocation_order::lifo});
  log.allocated(1, a, {0, 1});
  log.release_requested(1, a, {1}, {});
  log.freed(1, a, 1);
  const auto wrong = log.allocated(1, b, {2});
  ledger_audit_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->invariant, "I8");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{wrong});
  EXPECT_NE(found->message.find("the ledger handed room 7/gen 1 pages [2], its free list hands out "
                                "[1] next"),
            std::string::npos)
      << found->message;
}

// A pinned allocation (pages named by a logged incident) follows the log, not the list: it
// is not judged by the order, but its pages leave the list, and the next ordinary allocation
// of the rank is judged against what is left.
TEST(LedgerAuditChecker, AnExactAllocationIsNotJudgedByTheOrderButTheNextOneIs) {
  event_builder log;
  log.add(sim::ledger_created{1, 4, core::allocation_order::lifo});
  log.decided(1, core::pages_allocated{a, {2, 3}, /*exact=*/true});  // the list says [0, 1]
  {
    ledger_audit_checker checker;
    EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
  }
  const auto wrong = log.allocated(1, b, {3});  // 3 is taken: the list hands out 0 next
  ledger_audit_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{wrong});
  EXPECT_NE(found->message.find("pages [3], its free list hands out [0] next"), std::string::npos)
      << found->message;
}

TEST(LedgerAuditChecker, FiresOnALeaseEndedTheOtherWayThanItsState) {
  {
    event_builder log;
    log.allocated(1, a, {0});
    log.lease_started(1, 1, a, lease_role::source, {0});
    log.lease_quarantined(1, 1, a, {0});
    log.lease_ended(1, 1, a, {0});
    ledger_audit_checker checker;
    const auto found = observe_all(checker, log.events());
    ASSERT_TRUE(found.has_value());
    EXPECT_NE(found->message.find("lease 1 ended plainly, but it was quarantined"), std::string::npos)
        << found->message;
  }
  {
    event_builder log;
    log.allocated(1, a, {0});
    log.lease_started(1, 1, a, lease_role::source, {0});
    log.quarantine_confirmed(1, 1, a, {0});
    ledger_audit_checker checker;
    const auto found = observe_all(checker, log.events());
    ASSERT_TRUE(found.has_value());
    EXPECT_NE(found->message.find("ended as a confirmed quarantine, but it was never quarantined"),
              std::string::npos)
        << found->message;
  }
}

}  // namespace
}  // namespace kvsim::properties::ledger_audit_checker_test
