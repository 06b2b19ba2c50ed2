#include "properties/prefetch_leak_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::prefetch_leak_checker_test {
namespace {

using core::host_page_owner;
using core::room_key;
using testing::event_builder;
using testing::run_to_quiescence;

const room_key request_a{7, 0};
const room_key request_c{9, 0};

// --- fires ------------------------------------------------------------------------------

TEST(PrefetchLeakChecker, FiresAtQuiescenceOnAnEntryItsLockAndHostPagesLeftBehind) {
  // A pending rank that never revokes, and an active rank that never releases: what the
  // mutants of the revoke and of the lock release leave.
  event_builder log;
  const auto entry_a = log.decided(0, core::prefetch_registered{request_a});        // step 1
  const auto entry_c = log.decided(1, core::prefetch_registered{request_c});        // step 2
  const auto pages_c = log.decided(1, core::host_pages_allocated{request_c, {3, 4}});  // step 3
  const auto lock_c = log.decided(1, core::prefetch_lock_taken{request_c});          // step 4
  log.decided(1, core::host_pages_freed{request_c, {3}, host_page_owner::scheduler});  // step 5

  prefetch_leak_checker checker;
  const sim::finding expected{
      "I8",
      "I8: at quiescence rank 0 still holds, of room 7/gen 0, the prefetch entry (registered "
      "at step 1); rank 1 still holds, of room 9/gen 0, the prefetch entry (registered at step "
      "2), its lock (taken at step 4) and host pages [4] (allocated at step 3)",
      {entry_a, entry_c, pages_c, lock_c},
      {"rank 0 prefetch entry of room 7/gen 0, registered at step 1, never erased",
       "rank 1 prefetch entry of room 9/gen 0, registered at step 2, never erased",
       "rank 1 prefetch lock of room 9/gen 0, taken at step 4, never released",
       "rank 1 host page 4 of room 9/gen 0, allocated at step 3, never freed"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

TEST(PrefetchLeakChecker, FiresOnALockAloneWhenTheEntryWasErased) {
  event_builder log;
  log.decided(0, core::prefetch_registered{request_a});
  const auto lock = log.decided(0, core::prefetch_lock_taken{request_a});  // step 2
  log.decided(0, core::prefetch_erased{request_a});

  prefetch_leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I8: at quiescence rank 0 still holds, of room 7/gen 0, its lock (taken at step 2)");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{lock});
}

// --- quiet ------------------------------------------------------------------------------

TEST(PrefetchLeakChecker, StaysQuietWhenEverythingTakenIsGivenBack) {
  event_builder log;
  log.decided(0, core::prefetch_registered{request_a});
  log.decided(0, core::host_pages_allocated{request_a, {1, 2}});
  log.decided(0, core::prefetch_lock_taken{request_a});
  log.decided(0, core::prefetch_lock_released{request_a});
  log.decided(0, core::host_pages_freed{request_a, {1, 2}, host_page_owner::io_thread});
  log.decided(0, core::prefetch_erased{request_a});
  log.decided(1, core::prefetch_registered{request_a});  // a pending peer, revoked
  log.decided(1, core::prefetch_erased{request_a});

  prefetch_leak_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(PrefetchLeakChecker, StaysQuietOnAnEmptyRun) {
  prefetch_leak_checker checker;
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::prefetch_leak_checker_test
