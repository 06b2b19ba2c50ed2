#include "core/owner_thread.h"

#include <gtest/gtest.h>

#include "core/prefill_sender.h"
#include "tests/support/fake_ports.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::owner_thread_test {
namespace {

// A thread identity the test moves by hand: "another thread" without starting one, so the
// check is shown firing deterministically (the real backend's identity is std::thread's).
class settable_identity : public thread_identity {
 public:
  std::uint64_t current_thread() const override { return current; }
  std::uint64_t current = 1;
};

struct prefill_rig {
  testing::recording_sink sink;
  testing::fake_transfers transfers;
  testing::fake_messenger control;
  page_ledger ledger{0, 8, sink};
  room_lifetimes lifetimes{0, sink, 16};
  transfer_status_table statuses{0, sink};
  abort_token_verifier verifier{0, cluster_key{}, sink};
  prefill_sender sender{0, {transfers, control, sink}, {ledger, lifetimes, statuses, verifier},
                        variant::safe()};
};

TEST(SingleOwner, AnUnboundOwnerChecksNothing) {
  single_owner owner;
  EXPECT_FALSE(owner.bound());
  owner.check();
}

TEST(SingleOwner, TheBindingThreadPasses) {
  settable_identity identity;
  single_owner owner;
  owner.bind(identity);
  EXPECT_TRUE(owner.bound());
  owner.check();
}

TEST(SingleOwnerDeathTest, ACallFromAnotherThreadAborts) {
  settable_identity identity;
  single_owner owner;
  owner.bind(identity);
  identity.current = 2;
  EXPECT_DEATH(owner.check(), "does not own it");
}

TEST(SingleOwnerDeathTest, ABoundSenderRefusesAForeignThreadAtItsEntryPoint) {
  settable_identity identity;
  prefill_rig rig;
  rig.sender.bind_owner(identity);
  rig.sender.poll();  // the owner: fine
  identity.current = 7;
  EXPECT_DEATH(rig.sender.poll(), "does not own it");
}

}  // namespace
}  // namespace kvsim::core::owner_thread_test
