// The host page ledger applies the prefetch coordinator's decisions and refuses what I6
// forbids, in the words of the simulator's host page checker.
#include "real_backend/host/host_page_ledger.h"

#include <gtest/gtest.h>

namespace kvsim::real::host_page_ledger_test {
namespace {

TEST(HostPageLedger, OneFreePerAllocationIsSound) {
  host_page_ledger ledger(1);
  EXPECT_TRUE(ledger.allocated({{20, 0}, {0, 1}}).empty());
  EXPECT_TRUE(ledger.freed({{20, 0}, {0, 1}, core::host_page_owner::scheduler}).empty());
  EXPECT_EQ(ledger.frees(), 1u);
}

TEST(HostPageLedger, ASecondFreeIsAFindingNamingBothFreers) {
  host_page_ledger ledger(0);
  (void)ledger.allocated({{22, 0}, {4}});
  (void)ledger.freed({{22, 0}, {4}, core::host_page_owner::scheduler});
  const auto lines = ledger.freed({{22, 0}, {4}, core::host_page_owner::io_thread});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "I6: host page 4 of room 22/gen 0 on rank 0 was freed twice: by the "
            "scheduler and by the io_thread");
}

TEST(HostPageLedger, FreeingWhatWasNeverAllocatedIsAFinding) {
  host_page_ledger ledger(0);
  const auto lines = ledger.freed({{9, 0}, {2}, core::host_page_owner::scheduler});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "I6: the scheduler freed host page 2 of room 9/gen 0 on rank 0, but the "
            "page was never allocated to that request");
}

}  // namespace
}  // namespace kvsim::real::host_page_ledger_test
