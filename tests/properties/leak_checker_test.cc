#include "properties/leak_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/page_ledger.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::leak_checker_test {
namespace {

using core::lease_role;
using core::page_ledger;
using core::room_key;
using testing::event_builder;
using testing::observe_all;
using testing::run_to_quiescence;

const room_key request_a{7, 0};
const room_key request_b{7, 1};
const room_key request_c{9, 0};

// --- fires ------------------------------------------------------------------------------

TEST(LeakChecker, FiresOnPagesStillOwnedAtQuiescence) {
  event_builder log;
  const auto allocated = log.allocated(1, request_a, {3, 4});

  leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 1 still holds 2 page(s) of room 7/gen 0 [3,4]",
      {allocated},
      {"rank 1 page 3 of room 7/gen 0, allocated at step 1, never released",
       "rank 1 page 4 of room 7/gen 0, allocated at step 1, never released"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(LeakChecker, FiresOnWhatTheAuditSaysACoreComponentStillHolds) {
  event_builder log;
  log.add(sim::core_audited{0, "prefill_sender", {}});  // holds nothing: not a leak
  const auto held = log.add(
      sim::core_audited{0,
                        "transfer_status_table",
                        {"room 7/gen 0: status Failed kept", "room 9/gen 0: status Success kept"}});

  leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 0's transfer_status_table still holds room 7/gen 0: status Failed "
      "kept (and 1 more)",
      {held},
      {"rank 0 transfer_status_table: room 7/gen 0: status Failed kept",
       "rank 0 transfer_status_table: room 9/gen 0: status Success kept"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(LeakChecker, FiresOnPagesAndTheLeaseThatStillHoldsThem) {
  event_builder log;
  const auto allocated = log.allocated(1, request_a, {3, 4});
  const auto leased = log.lease_started(1, 5, request_a, lease_role::destination, {3, 4});

  leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 1 still holds 2 page(s) of room 7/gen 0 [3,4] and 1 active lease "
      "(lease 5 of room 7/gen 0)",
      {allocated, leased},
      {"rank 1 page 3 of room 7/gen 0, allocated at step 1, never released",
       "rank 1 page 4 of room 7/gen 0, allocated at step 1, never released",
       "rank 1 lease 5 of room 7/gen 0 (destination [3,4]), started at step 2, never ended"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(LeakChecker, FiresOnALeaseLeftBehindByAReleaseThatFreedItsPages) {
  // The historical ledger frees leased pages at once; the lease itself is still never ended.
  event_builder log;
  page_ledger prefill(0, 4, log,
                      {core::allocation_order::lifo, core::release_policy::free_while_leased});
  const auto pages = prefill.allocate(request_a, 1).value();         // step 1
  ASSERT_TRUE(prefill.lease(request_a, lease_role::source, pages));  // step 2
  ASSERT_TRUE(prefill.release_all(request_a));                       // steps 3, 4

  leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 0 still holds 1 active lease (lease 1 of room 7/gen 0)",
      {1},
      {"rank 0 lease 1 of room 7/gen 0 (source [0]), started at step 2, never ended"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(LeakChecker, FiresOnAQuarantineTheTransportNeverConfirmed) {
  event_builder log;
  page_ledger decode(1, 4, log);
  const auto pages = decode.allocate(request_a, 2).value();                            // 1
  const auto lease = decode.lease(request_a, lease_role::destination, pages).value();  // 2
  ASSERT_TRUE(decode.quarantine(lease));                                               // 3
  ASSERT_TRUE(decode.release_all(request_a));  // 4: both pages retire behind the quarantine

  leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 1 still holds 2 page(s) of room 7/gen 0 [0,1] and 1 quarantined "
      "lease (lease 1 of room 7/gen 0)",
      {0, 1},
      {"rank 1 page 0 of room 7/gen 0, allocated at step 1, release requested, waiting for 1 "
       "lease",
       "rank 1 page 1 of room 7/gen 0, allocated at step 1, release requested, waiting for 1 "
       "lease",
       "rank 1 lease 1 of room 7/gen 0 (destination [0,1]), started at step 2, quarantined at "
       "step 3, never confirmed"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(LeakChecker, NamesEveryLeakingRankInOrderAndEveryOwnerOnIt) {
  event_builder log;
  // Rank 1 first in the log: the message still lists ranks in ascending order.
  log.allocated(1, request_b, {2});
  log.lease_started(1, 1, request_b, lease_role::destination, {2});
  log.lease_started(1, 2, request_b, lease_role::destination, {2});
  log.lease_quarantined(1, 2, request_b, {2});
  log.allocated(0, request_c, {0});
  log.allocated(0, request_a, {1});
  log.allocated(2, request_a, {0});  // rank 2 ends clean
  log.release_requested(2, request_a, {0}, {});
  log.freed(2, request_a, 0);

  leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I8: at quiescence rank 0 still holds 1 page(s) of room 7/gen 0 [1] and 1 page(s) of "
            "room 9/gen 0 [0]; rank 1 still holds 1 page(s) of room 7/gen 1 [2], 1 active lease "
            "(lease 1 of room 7/gen 1) and 1 quarantined lease (lease 2 of room 7/gen 1)");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(found->details.size(), 5u);
}

TEST(LeakChecker, CountsSeveralLeasesOfOneKindTogether) {
  event_builder log;
  log.allocated(0, request_a, {0, 1});
  log.lease_started(0, 3, request_a, lease_role::source, {0});
  log.lease_started(0, 4, request_a, lease_role::source, {1});

  leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I8: at quiescence rank 0 still holds 2 page(s) of room 7/gen 0 [0,1] and 2 active "
            "leases (lease 3 of room 7/gen 0, lease 4 of room 7/gen 0)");
}

// --- quiet ------------------------------------------------------------------------------

TEST(LeakChecker, StaysQuietWhenEverythingIsFreedAtQuiescence) {
  event_builder log;
  page_ledger prefill(0, 4, log);
  page_ledger decode(1, 4, log);
  const auto source = prefill.allocate(request_a, 2).value();
  const auto destination = decode.allocate(request_a, 2).value();
  const auto read = prefill.lease(request_a, lease_role::source, source).value();
  const auto write = decode.lease(request_a, lease_role::destination, destination).value();
  ASSERT_TRUE(decode.quarantine(write));
  ASSERT_TRUE(decode.release_all(request_a));   // deferred behind the quarantine
  ASSERT_TRUE(prefill.release_all(request_a));  // deferred behind the read
  ASSERT_TRUE(prefill.end_lease(read));
  ASSERT_TRUE(decode.confirm_quarantine(write));
  const auto next = decode.allocate(request_b, 3).value();
  ASSERT_TRUE(decode.release(request_b, next));
  ASSERT_EQ(decode.free_count(), 4u);
  ASSERT_EQ(prefill.free_count(), 4u);

  leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

// Peer death: the dead rank's ledger went with it; a survivor's unconfirmed quarantine for
// the dead peer is still a leak.
TEST(LeakChecker, JudgesTheSurvivorsNotARankThatDied) {
  event_builder log;
  log.allocated(0, request_a, {1, 2});  // prefill rank 0, which dies holding it
  log.lease_started(0, 1, request_a, lease_role::source, {1, 2});
  log.add(sim::rank_stopped{0});
  leak_checker quiet;
  EXPECT_EQ(run_to_quiescence(quiet, log.events()), std::nullopt);

  const auto allocated = log.allocated(2, request_a, {5});
  const auto leased = log.lease_started(2, 1, request_a, lease_role::destination, {5});
  log.lease_quarantined(2, 1, request_a, {5});
  leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I8: at quiescence rank 2 still holds 1 page(s) of room 7/gen 0 [5] and 1 quarantined "
            "lease (lease 1 of room 7/gen 0)");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{allocated, leased}));
}

TEST(LeakChecker, StaysQuietOnAnEmptyRun) {
  leak_checker checker;
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

TEST(LeakChecker, ObserveNeverFiresEvenOnEventsOtherCheckersReport) {
  event_builder log;
  log.allocated(1, request_a, {2});
  log.freed(1, request_a, 2);
  log.copied(3, request_a, 0, 5, 1, 2);  // use after free: I1's business
  log.decided(1, core::ledger_misuse{core::ledger_error::double_release, request_a, 2, {}});

  leak_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::leak_checker_test
