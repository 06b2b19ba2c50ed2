// The prefill audit at quiescence (scenarios/core_audit.h) reads the verifier's memory of
// ABORTs too: a room that is over forgets the ABORTs it took, so once the sender tracks no room
// whatever the verifier still remembers only grows. Each way a room ends on a prefill rank
// (finished after an ABORT, or tombstoned by an ABORT before it opened) leaves nothing; a
// token taken for a room the sender never forgets is reported.
#include "scenarios/core_audit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/abort_token.h"
#include "core/link_keys.h"
#include "core/prefill_rank.h"
#include "tests/support/fake_ports.h"
#include "tests/support/recording_sink.h"

namespace kvsim::scenarios::core_audit_test {
namespace {

using core::control_kind;
using core::control_message;
using core::rank_id;
using core::room_key;
using testing::fake_messenger;
using testing::fake_transfers;
using testing::recording_sink;

constexpr rank_id prefill = 0;
constexpr rank_id decode = 1;
const room_key request{7, 0};

core::cluster_key cluster() {
  core::cluster_key key;
  key.bytes.fill(3);
  return key;
}

struct prefill_under_audit {
  recording_sink sink;
  fake_transfers transfers;
  fake_messenger control;
  core::prefill_rank rank{prefill, {transfers, control, sink},
                          core::link_keyring(prefill, cluster(), {decode}),
                          core::prefill_rank_options{.pages_total = 8}};
  core::link_keyring decode_ring{decode, cluster(), {prefill}};
  core::abort_token_issuer issuer{decode, decode_ring, 1, sink};

  control_message abort_of(room_key key) {
    return {control_kind::abort, decode, key, issuer.issue(key, prefill), {}, {}};
  }
  bool open(room_key key) {
    const auto pages = rank.ledger().allocate(key, 2).value();
    return rank.sender().open(key, pages, std::vector<rank_id>{decode});
  }
  // What the sender's audit holds: the verifier's memory is reported there.
  std::vector<std::string> held_by_sender() {
    const auto audits = audit_prefill(prefill, rank.sender(), rank.lifetimes(), rank.statuses(),
                                      rank.verifier(), {request});
    EXPECT_EQ(audits.front().component, "prefill_sender");
    return audits.front().held;
  }
};

TEST(PrefillAudit, AnAbortedRoomThatFinishedLeavesNoTokenBehind) {
  prefill_under_audit p;
  ASSERT_TRUE(p.open(request));
  p.rank.sender().on_abort(p.abort_of(request));
  EXPECT_EQ(p.rank.verifier().remembered(), 1u);
  p.rank.sender().finish(request);
  EXPECT_EQ(p.held_by_sender(), std::vector<std::string>{});
}

TEST(PrefillAudit, AnAbortBeforeTheOpenIsForgottenWithTheTombstonedRoom) {
  prefill_under_audit p;
  p.rank.sender().on_abort(p.abort_of(request));
  EXPECT_EQ(p.rank.verifier().remembered(), 1u);
  EXPECT_FALSE(p.open(request)) << "tombstoned: the request is over before it began";
  EXPECT_EQ(p.rank.verifier().remembered(), 0u);
  EXPECT_EQ(p.held_by_sender(), std::vector<std::string>{});
  // Retired with the room: a replay of that ABORT is refused, not taken again.
  p.rank.sender().on_abort(p.abort_of(request));
  EXPECT_EQ(p.rank.verifier().remembered(), 0u);
}

TEST(PrefillAudit, FiresOnAnAbortTheVerifierStillRemembersOnceNoRoomIsTracked) {
  prefill_under_audit p;
  // A token taken and never forgotten: the sender has no room of it to end.
  ASSERT_TRUE(p.rank.verifier().accept_abort(p.issuer.issue(request, prefill), request, decode));
  EXPECT_EQ(p.held_by_sender(),
            std::vector<std::string>{"1 ABORT token(s) still remembered by the verifier"});
}

// A request aborted before it reached this rank may still open: its ABORT is remembered as
// long as its before-open tombstone lives, and is not a leak; once the tombstone ended (a
// newer generation opened), a memory of it left behind would be.
TEST(PrefillAudit, AnAbortAwaitingItsOpenIsHeldOnlyWhileItsTombstoneLives) {
  prefill_under_audit p;
  p.rank.sender().on_abort(p.abort_of(request));
  EXPECT_EQ(p.held_by_sender(), std::vector<std::string>{});
  const room_key next{request.room, request.generation + 1};
  ASSERT_TRUE(p.open(next));
  p.rank.sender().finish(next);
  EXPECT_EQ(p.rank.verifier().remembered(), 0u);
  // The same memory kept by hand after its tombstone ended is reported.
  ASSERT_TRUE(p.rank.verifier().accept_abort(p.issuer.issue(room_key{9, 0}, prefill), room_key{9, 0}, decode));
  const auto audits = audit_prefill(prefill, p.rank.sender(), p.rank.lifetimes(), p.rank.statuses(),
                                    p.rank.verifier(), {request, next, room_key{9, 0}});
  EXPECT_EQ(audits.front().held,
            std::vector<std::string>{"1 ABORT token(s) still remembered by the verifier"});
}

TEST(PrefillAudit, AStillTrackedRoomMayHoldItsAborts) {
  prefill_under_audit p;
  ASSERT_TRUE(p.open(request));
  p.rank.sender().on_abort(p.abort_of(request));
  const auto held = p.held_by_sender();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_NE(held.front().find("still tracked"), std::string::npos) << held.front();
}

}  // namespace
}  // namespace kvsim::scenarios::core_audit_test
