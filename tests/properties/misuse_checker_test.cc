#include "properties/misuse_checker.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include "core/page_ledger.h"
#include "properties/use_after_free_checker.h"
#include "scenarios/careless_call.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::misuse_checker_test {
namespace {

using core::ledger_error;
using core::room_key;
using sim::ledger_call;
using testing::event_builder;
using testing::observe_all;

constexpr core::rank_id rank = 0;
constexpr std::uint32_t pool = 4;
const room_key request_a{7, 0};
const room_key request_b{8, 0};
const room_key nobody{std::numeric_limits<core::room_id>::max(),
                      std::numeric_limits<core::generation_t>::max()};

sim::misuse_attempted pages_call(ledger_call call, room_key caller,
                                 std::vector<core::page_index> pages) {
  return {rank, call, caller, core::lease_role::source, std::move(pages), 0, 0, pool};
}
sim::misuse_attempted lease_id_call(ledger_call call, core::lease_id lease) {
  return {rank, call, {}, core::lease_role::source, {}, 0, lease, pool};
}

// A real ledger in a known state: A owns pages 0 and 1 (1 leased and released, so retiring),
// B owns page 2 under a lease, page 3 is free. Its events go into `log`.
struct ledger_in_use {
  explicit ledger_in_use(event_builder& log) : ledger(rank, pool, log) {
    const auto a = ledger.allocate(request_a, 2);  // LIFO from a fresh pool: 0, 1
    const auto b = ledger.allocate(request_b, 1);  // 2
    EXPECT_TRUE(a && b);
    const std::vector<core::page_index> one{1};
    const auto a_lease = ledger.lease(request_a, core::lease_role::source, one);
    EXPECT_TRUE(a_lease);
    const std::vector<core::page_index> two{2};
    b_lease = ledger.lease(request_b, core::lease_role::destination, two).value();
    EXPECT_TRUE(ledger.release(request_a, one));  // page 1 retires behind A's lease
  }
  core::page_ledger ledger;
  core::lease_id b_lease = 0;
};

// The world's bracket: attempt, the call on the ledger, its answer.
void careless(event_builder& log, core::page_ledger& ledger, const sim::misuse_attempted& call) {
  log.add(call);
  log.add(sim::misuse_answered{call.rank, scenarios::make_careless_call(ledger, call)});
}

// --- quiet --------------------------------------------------------------------------------

TEST(MisuseChecker, QuietWhileTheProductionLedgerRefusesEveryKindOfCarelessCall) {
  event_builder log;
  ledger_in_use state(log);
  const std::vector<sim::misuse_attempted> calls{
      {rank, ledger_call::allocate, request_a, core::lease_role::source, {}, 0, 0, pool},
      pages_call(ledger_call::release, request_a, {}),
      pages_call(ledger_call::lease, request_b, {}),
      pages_call(ledger_call::release, request_a, {0, pool}),
      pages_call(ledger_call::lease, request_a, {0, std::numeric_limits<core::page_index>::max()}),
      pages_call(ledger_call::release, request_a, {0, 0}),
      pages_call(ledger_call::lease, request_b, {2, 2}),
      pages_call(ledger_call::release, nobody, {3}),   // free
      pages_call(ledger_call::lease, nobody, {3}),     // free
      pages_call(ledger_call::release, request_b, {0}),  // A's
      pages_call(ledger_call::lease, request_a, {2}),    // B's
      pages_call(ledger_call::release, request_a, {1}),  // retiring
      pages_call(ledger_call::lease, request_a, {0, 1}), // the second retires
      lease_id_call(ledger_call::end_lease, 0),
      lease_id_call(ledger_call::quarantine, std::numeric_limits<core::lease_id>::max()),
      lease_id_call(ledger_call::confirm_quarantine, state.b_lease),  // live, not quarantined
      pages_call(ledger_call::release_all, nobody, {}),  // holds nothing: accepted, no change
  };
  misuse_checker checker;
  for (const auto& call : calls) careless(log, state.ledger, call);
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
  EXPECT_EQ(state.ledger.check_consistency(), std::vector<std::string>{});
}

TEST(MisuseChecker, PredictsInTheLedgersOrderOfChecks) {
  event_builder log;
  ledger_in_use state(log);
  misuse_checker checker;
  observe_all(checker, log.events());
  const auto predicted = [&](const sim::misuse_attempted& call) {
    const auto p = checker.predict(call);
    return p ? std::optional(p->error) : std::nullopt;
  };
  // The list is checked whole before any page's owner: the duplicate wins over the free page.
  EXPECT_EQ(predicted(pages_call(ledger_call::release, nobody, {3, 0, 0})),
            ledger_error::duplicate_page);
  EXPECT_EQ(predicted(pages_call(ledger_call::release, request_a, {0, 1})),
            ledger_error::double_release);
  EXPECT_EQ(predicted(pages_call(ledger_call::lease, request_a, {0, 1})),
            ledger_error::page_retiring);
  EXPECT_EQ(predicted(pages_call(ledger_call::lease, request_a, {3})), ledger_error::page_not_owned);
  EXPECT_EQ(predicted(lease_id_call(ledger_call::end_lease, state.b_lease + 1)),
            ledger_error::unknown_lease);
  EXPECT_EQ(predicted(pages_call(ledger_call::release, request_a, {0})), std::nullopt)
      << "A releasing its own page is no misuse";
  EXPECT_EQ(predicted(lease_id_call(ledger_call::end_lease, state.b_lease)), std::nullopt);
}

TEST(MisuseChecker, AnEndedLeaseIsAnUnderflowNotAnUnknownLease) {
  event_builder log;
  ledger_in_use state(log);
  ASSERT_TRUE(state.ledger.end_lease(state.b_lease));
  misuse_checker checker;
  observe_all(checker, log.events());
  const auto p = checker.predict(lease_id_call(ledger_call::end_lease, state.b_lease));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->error, ledger_error::lease_underflow);
}

// --- fires --------------------------------------------------------------------------------

TEST(MisuseChecker, FiresWhenTheLedgerAcceptsAReleaseOfAnotherRequestsPage) {
  event_builder log;
  log.allocated(rank, request_a, {0, 1});
  const auto attempt = log.add(pages_call(ledger_call::release, request_b, {0}));
  const auto release = log.release_requested(rank, request_b, {0}, {});
  const auto freed = log.freed(rank, request_a, 0);
  const auto answer = log.add(sim::misuse_answered{rank, std::nullopt});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->invariant, "misuse");
  EXPECT_EQ(found->message,
            "misuse: careless release on rank 0 by room 8/gen 0 of pages [0]: answered accepted, "
            "the history says not_owner");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{attempt, release, freed, answer}));
  EXPECT_EQ(found->details.size(), 4u) << "no refusal, and two changes of the ledger";
}

TEST(MisuseChecker, FiresOnARefusalThatNamesTheWrongCulprit) {
  // validate_page_list forgetting its culprit: the right reason, no page named.
  event_builder log;
  log.add(pages_call(ledger_call::release, request_a, {2, 2}));
  log.decided(rank, core::ledger_misuse{ledger_error::duplicate_page, request_a, std::nullopt, {}});
  log.add(sim::misuse_answered{rank, ledger_error::duplicate_page});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->message,
            "misuse: careless release on rank 0 by room 7/gen 0 of pages [2,2]: reported "
            "duplicate_page (caller room 7/gen 0), the history says duplicate_page (caller room "
            "7/gen 0, page 2)");
}

TEST(MisuseChecker, FiresOnTheWrongReason) {
  // An out-of-range page the ledger takes for a free one.
  event_builder log;
  log.add(pages_call(ledger_call::lease, request_a, {pool}));
  log.decided(rank, core::ledger_misuse{ledger_error::page_not_owned, request_a, pool, {}});
  log.add(sim::misuse_answered{rank, ledger_error::page_not_owned});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->message,
            "misuse: careless lease on rank 0 by room 7/gen 0 of pages [4]: answered "
            "page_not_owned, the history says page_out_of_range");
}

TEST(MisuseChecker, FiresOnARefusalThatIsNeverReported) {
  event_builder log;
  log.add(lease_id_call(ledger_call::end_lease, 0));
  log.add(sim::misuse_answered{rank, ledger_error::unknown_lease});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->message,
            "misuse: careless end_lease on rank 0 of lease 0: 0 ledger_misuse event(s), expected "
            "one: unknown_lease (caller room 0/gen 0, lease 0)");
}

TEST(MisuseChecker, FiresOnACallTheHistorySaysIsNoMisuse) {
  // A world that trusted a lying accessor: A's own page, not retiring, released "carelessly".
  event_builder log;
  log.allocated(rank, request_a, {0});
  log.add(pages_call(ledger_call::release, request_a, {0}));
  log.release_requested(rank, request_a, {0}, {});
  log.freed(rank, request_a, 0);
  log.add(sim::misuse_answered{rank, std::nullopt});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("by the ledger's own history the call is no misuse"),
            std::string::npos)
      << found->message;
}

TEST(MisuseChecker, FiresWhenAHarmlessReleaseAllIsRefused) {
  // release_all treating "nothing to release" as an empty list: a scheduler cleaning a request
  // twice would be told it misused the ledger.
  event_builder log;
  log.add(pages_call(ledger_call::release_all, nobody, {}));
  log.decided(rank, core::ledger_misuse{ledger_error::empty_request, nobody, std::nullopt, {}});
  log.add(sim::misuse_answered{rank, ledger_error::empty_request});
  misuse_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("answered empty_request, but the room holds nothing to release"),
            std::string::npos)
      << found->message;
}

// --- the core's own misuse stays use_after_free's -----------------------------------------

TEST(MisuseChecker, UseAfterFreeLeavesACarelessRefusalAloneButNotTheCoresOwn) {
  event_builder log;
  log.add(pages_call(ledger_call::release, nobody, {3}));
  log.decided(rank, core::ledger_misuse{ledger_error::double_release, nobody, 3, {}});
  log.add(sim::misuse_answered{rank, ledger_error::double_release});
  use_after_free_checker quiet;
  EXPECT_EQ(observe_all(quiet, log.events()), std::nullopt);
  const auto own = log.decided(rank, core::ledger_misuse{ledger_error::double_release, request_a, 3, {}});
  use_after_free_checker fires;
  const auto found = observe_all(fires, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->invariant, "misuse");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{own});
}

}  // namespace
}  // namespace kvsim::properties::misuse_checker_test
