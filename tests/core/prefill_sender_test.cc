#include "core/prefill_sender.h"

#include <gtest/gtest.h>

#include "tests/support/fake_ports.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::prefill_sender_test {
namespace {

using testing::fake_messenger;
using testing::fake_transfers;
using testing::recording_sink;

constexpr rank_id prefill_rank = 0;
constexpr rank_id decode_rank = 1;
constexpr rank_id second_decode_rank = 2;
const room_key request{7, 0};

cluster_key test_key() {
  cluster_key key;
  key.bytes.fill(9);
  return key;
}

// One prefill rank with its ledger, lifetimes, statuses and token verifier, and the decode
// ranks' token issuers (decode makes the tokens prefill checks).
class PrefillSender : public ::testing::Test {
 protected:
  explicit PrefillSender(variant v = variant::safe())
      : sender(prefill_rank, {transfers, control, sink}, {ledger, lifetimes, statuses, verifier}, v) {}

  std::vector<page_index> open_request() {
    source = ledger.allocate(request, 4).value();
    EXPECT_TRUE(sender.open(request, source));
    return source;
  }
  bool send(std::uint32_t siblings) {
    return sender.send_chunk(request, decode_rank, source, destination, siblings);
  }
  control_message abort_from(rank_id decode, abort_token_issuer& issuer) {
    return control_message{control_kind::abort, decode, request, issuer.issue(request, prefill_rank), {}, {}};
  }

  recording_sink sink;
  fake_transfers transfers;
  fake_messenger control;
  page_ledger ledger{prefill_rank, 8, sink};
  room_lifetimes lifetimes{prefill_rank, sink, 16};
  transfer_status_table statuses{prefill_rank, sink};
  abort_token_verifier verifier{prefill_rank, test_key(), sink};
  abort_token_issuer decode_tokens{decode_rank, test_key(), 1, sink};
  abort_token_issuer second_decode_tokens{second_decode_rank, test_key(), 2, sink};
  prefill_sender sender;
  std::vector<page_index> source;
  const std::vector<page_index> destination{10, 11, 12, 13};
};

TEST_F(PrefillSender, AnAbortDuringATransferIsAcknowledgedOnlyAfterTheDrain) {
  open_request();
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  EXPECT_EQ(statuses.get(request), kv_status::failed);
  EXPECT_TRUE(lifetimes.is_closed(request));
  sender.poll();
  EXPECT_TRUE(control.of_kind(control_kind::abort_ack).empty()) << "ACK before the copy ended";
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  const auto acks = control.of_kind(control_kind::abort_ack);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].to, decode_rank);
  EXPECT_TRUE(acks[0].message.token.has_value());
  EXPECT_TRUE(sink.last<drain_ack_sent>()->room_closed);
}

TEST_F(PrefillSender, AClosedRoomAdmitsNoChunk) {
  open_request();
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  EXPECT_FALSE(send(1));
  EXPECT_TRUE(transfers.submitted.empty());
  EXPECT_EQ(sink.last<lifetime_refused>()->error, lifetime_error::room_closed);
}

TEST_F(PrefillSender, SourcePagesStayLeasedUntilEverySiblingEnds) {
  open_request();
  ASSERT_TRUE(send(2));
  ASSERT_EQ(transfers.submitted.size(), 2u);
  transfers.end(1, transfer_poll::failed);
  sender.poll();
  sender.finish(request);
  EXPECT_EQ(ledger.retiring_count(), 4u) << "a sibling still reads: nothing may be freed";
  transfers.end(2, transfer_poll::succeeded);
  sender.poll();
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.last<request_finished>()->outcome, request_outcome::aborted);
}

TEST_F(PrefillSender, ATimedOutPollIsNotTheEndOfTheCopy) {
  open_request();
  ASSERT_TRUE(send(1));
  transfers.end(1, transfer_poll::timed_out_unconfirmed);
  sender.poll();
  sender.finish(request);
  EXPECT_TRUE(sender.in_flight(request));
  EXPECT_EQ(ledger.free_count(), 4u);
}

TEST_F(PrefillSender, ATimeoutWithoutConfirmationQuarantinesTheLeaseUntilTheCopyEnds) {
  open_request();
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  transfers.end(1, transfer_poll::timed_out_unconfirmed);
  sender.poll();
  sender.poll();  // the transport times out again: one quarantine
  ASSERT_EQ(sink.count<transfer_unconfirmed>(), 1u);
  EXPECT_EQ(sink.count<lease_quarantined>(), 1u);
  EXPECT_EQ(ledger.quarantined_page_count(), 4u);
  EXPECT_EQ(statuses.get(request), kv_status::failed) << "the transport reported a failure";
  sender.finish(request);
  EXPECT_EQ(ledger.free_count(), 4u) << "the copy may still read the source";
  EXPECT_TRUE(control.of_kind(control_kind::abort_ack).empty()) << "no drain-ACK before it ends";
  // A later poll sees the copy's real end: that is the transport's confirmation.
  transfers.end(1, transfer_poll::succeeded);
  sender.poll();
  EXPECT_EQ(sink.count<quarantine_confirmed>(), 1u);
  EXPECT_EQ(sink.count<lease_ended>(), 0u);
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(control.of_kind(control_kind::abort_ack).size(), 1u);
  EXPECT_FALSE(sender.tracking(request));
}

TEST_F(PrefillSender, AnAbortBeforeOpenLeavesATombstoneAndIsAcknowledgedAtOnce) {
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  EXPECT_EQ(control.of_kind(control_kind::abort_ack).size(), 1u);
  source = ledger.allocate(request, 4).value();
  EXPECT_FALSE(sender.open(request, source)) << "the late sender must never start";
}

TEST_F(PrefillSender, ForgedAndDuplicatedAbortsTouchNothing) {
  open_request();
  ASSERT_TRUE(send(1));
  control_message forged = abort_from(decode_rank, decode_tokens);
  forged.token->mac[0] ^= 1;
  sender.on_abort(forged);
  EXPECT_TRUE(lifetimes.is_admitting(request));
  const control_message genuine = abort_from(decode_rank, decode_tokens);
  sender.on_abort(genuine);
  sender.on_abort(genuine);
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  EXPECT_EQ(control.of_kind(control_kind::abort_ack).size(), 1u);
}

TEST_F(PrefillSender, EveryAbortingDecodeRankGetsItsOwnAck) {
  open_request();
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  sender.on_abort(abort_from(second_decode_rank, second_decode_tokens));
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  const auto acks = control.of_kind(control_kind::abort_ack);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].to, decode_rank);
  EXPECT_EQ(acks[1].to, second_decode_rank);
}

class PrefillSenderB2 : public PrefillSender {
 protected:
  PrefillSenderB2() : PrefillSender(variant::with(bug::b2_early_ack)) {}
};

TEST_F(PrefillSenderB2, HistoricalEarlyAckGoesOutWhileTheCopyRuns) {
  open_request();
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  EXPECT_EQ(control.of_kind(control_kind::abort_ack).size(), 1u);
  EXPECT_TRUE(sender.in_flight(request));
}

class PrefillSenderB6 : public PrefillSender {
 protected:
  PrefillSenderB6() : PrefillSender(variant::with(bug::b6_one_ack_target)) {}
};

TEST_F(PrefillSenderB6, HistoricalSingleTargetLeavesTheFirstRankUnacknowledged) {
  open_request();
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  sender.on_abort(abort_from(second_decode_rank, second_decode_tokens));
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  const auto acks = control.of_kind(control_kind::abort_ack);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].to, second_decode_rank);
}

class PrefillSenderB10 : public PrefillSender {
 protected:
  PrefillSenderB10() : PrefillSender(variant::with(bug::b10_no_tombstone)) {}
};

TEST_F(PrefillSenderB10, HistoricalAbortBeforeOpenLetsTheLateSenderStart) {
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  source = ledger.allocate(request, 4).value();
  EXPECT_TRUE(sender.open(request, source));
  EXPECT_TRUE(send(1)) << "writes after the ACK: decode has already freed these pages";
}

// A prefill rank whose tombstone tables hold one entry each (the tightest), and the ABORTs a
// decode rank sends it.
class PrefillSenderReplays : public ::testing::Test {
 protected:
  control_message abort_of(room_key key) {
    return control_message{control_kind::abort, decode_rank, key, decode_tokens.issue(key, prefill_rank), {}, {}};
  }

  recording_sink sink;
  fake_transfers transfers;
  fake_messenger control;
  page_ledger ledger{prefill_rank, 8, sink};
  room_lifetimes lifetimes{prefill_rank, sink, 1};
  transfer_status_table statuses{prefill_rank, sink};
  abort_token_verifier verifier{prefill_rank, test_key(), sink};
  abort_token_issuer decode_tokens{decode_rank, test_key(), 1, sink};
  prefill_sender sender{prefill_rank, {transfers, control, sink}, {ledger, lifetimes, statuses, verifier},
                        variant::safe()};
};

// Replays of authentic ABORTs need no key, only a recording. Each names a room that is over here,
// so each is ACKed and closed as one; if that close took a before-open place, a stream of them
// would evict the tombstone that stops a late sender, whose open would then be admitted.
TEST_F(PrefillSenderReplays, ReplayedAbortsOfRoomsThatAreOverNeverLetALateSenderIn) {
  std::vector<control_message> recorded;
  for (generation_t g = 0; g < 3; ++g) {  // served, aborted, over: their ABORTs recorded
    const room_key served{40, g};
    const auto pages = ledger.allocate(served, 1).value();
    ASSERT_TRUE(sender.open(served, pages));
    recorded.push_back(abort_of(served));
    sender.on_abort(recorded.back());
    sender.finish(served);
    ASSERT_FALSE(sender.tracking(served));
  }
  const room_key late{9, 0};
  sender.on_abort(abort_of(late));  // decode gave up before this rank's sender existed
  ASSERT_TRUE(lifetimes.is_tombstoned_before_open(late));
  for (const control_message& replay : recorded) sender.on_abort(replay);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::retired);
  EXPECT_TRUE(lifetimes.is_tombstoned_before_open(late)) << "a replay evicted the late sender's tombstone";
  const auto pages = ledger.allocate(late, 1).value();
  EXPECT_FALSE(sender.open(late, pages)) << "the late sender was let in";
}

// A request aborted before it reached this rank never opens here: its ABORT's memory ends with
// its before-open tombstone, when a newer generation of the room opens or the table evicts it,
// and a replay afterwards is refused as retired and closes nothing live. Before, the memory
// stayed until the verifier's own bound, one entry for every such request.
TEST_F(PrefillSenderReplays, AbortsOfRequestsThatNeverOpenAreForgottenWithTheirTombstones) {
  const room_key dropped{40, 0};  // aborted before admission: its room never opens here
  const control_message first = abort_of(dropped);
  sender.on_abort(first);
  ASSERT_TRUE(lifetimes.is_tombstoned_before_open(dropped));
  EXPECT_EQ(verifier.remembered(dropped), 1u) << "remembered while its open may still come";
  const room_key next{40, 1};  // the room's next request opens: the dropped one can no longer
  const auto pages = ledger.allocate(next, 1).value();
  ASSERT_TRUE(sender.open(next, pages));
  EXPECT_FALSE(lifetimes.is_tombstoned_before_open(dropped));
  EXPECT_EQ(verifier.remembered(), 0u) << "the retired tombstone's ABORT is still remembered";
  sender.on_abort(first);  // replayed
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::retired);
  EXPECT_TRUE(lifetimes.is_admitting(next)) << "a replay of the dropped request closed the live one";

  const room_key evicted{41, 0};
  const room_key newer_tombstone{42, 0};
  sender.on_abort(abort_of(evicted));
  sender.on_abort(abort_of(newer_tombstone));  // the one-place table evicts the first
  EXPECT_FALSE(lifetimes.is_tombstoned_before_open(evicted));
  EXPECT_EQ(verifier.remembered(evicted), 0u) << "the evicted tombstone's ABORT is still remembered";
  EXPECT_EQ(verifier.remembered(newer_tombstone), 1u);
}

}  // namespace
}  // namespace kvsim::core::prefill_sender_test

namespace kvsim::core::prefill_sender_test {
namespace {

// A former defect: a transfer that fails marked the room Failed but left admission open, so a
// chunk queued after it still wrote for a request that was over. Before the fix, the second
// send_chunk below was admitted.
TEST_F(PrefillSender, AFailedTransferClosesAdmissionLikeFail) {
  open_request();
  ASSERT_TRUE(send(1));
  transfers.end_all(transfer_poll::failed);
  sender.poll();
  EXPECT_EQ(statuses.get(request), kv_status::failed);
  EXPECT_FALSE(lifetimes.is_admitting(request));
  EXPECT_FALSE(send(1)) << "a chunk admitted to a request whose transfer already failed";
}

// A former defect: open() of a room already open reported the request "finished aborted" while
// it was still open and transferring. Before the fix a request_finished event came out here.
TEST_F(PrefillSender, ASecondOpenOfAnOpenRoomChangesNothing) {
  open_request();
  ASSERT_TRUE(send(1));
  sink.clear();
  EXPECT_FALSE(sender.open(request, source));
  EXPECT_FALSE(sink.last<request_finished>().has_value()) << "an open request reported finished";
  const auto refused = sink.last<lifetime_refused>();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->error, lifetime_error::already_open);
  EXPECT_TRUE(sender.tracking(request));
  EXPECT_TRUE(lifetimes.is_admitting(request));
}

// The outcome is the core's to tell (the simulated world used to send it): every decode rank
// named at open hears chunk_ready once the request is over here and nothing is in flight.
TEST_F(PrefillSender, EveryDecodeRankHearsTheOutcomeOnceTheRequestIsOver) {
  source = ledger.allocate(request, 4).value();
  const std::vector<rank_id> decode_ranks{decode_rank, second_decode_rank};
  ASSERT_TRUE(sender.open(request, source, decode_ranks));
  ASSERT_TRUE(send(2));
  sender.finish(request);
  EXPECT_TRUE(control.of_kind(control_kind::chunk_ready).empty()) << "told before the copy ended";
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  const auto ready = control.of_kind(control_kind::chunk_ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].to, decode_rank);
  EXPECT_EQ(ready[1].to, second_decode_rank);
  EXPECT_TRUE(control.of_kind(control_kind::status).empty());
  EXPECT_FALSE(sender.tracking(request));
}

TEST_F(PrefillSender, AFailedRequestIsToldAsAFailedStatus) {
  source = ledger.allocate(request, 4).value();
  const std::vector<rank_id> decode_ranks{decode_rank};
  ASSERT_TRUE(sender.open(request, source, decode_ranks));
  ASSERT_TRUE(send(1));
  transfers.end_all(transfer_poll::failed);
  sender.poll();
  sender.finish(request);
  const auto told = control.of_kind(control_kind::status);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].message.status, kv_status::failed);
  EXPECT_TRUE(control.of_kind(control_kind::chunk_ready).empty());
}

TEST_F(PrefillSender, ALateOpenRefusedByItsTombstoneTellsEveryDecodeRankItFailed) {
  sender.on_abort(abort_from(decode_rank, decode_tokens));  // before the sender exists
  source = ledger.allocate(request, 4).value();
  const std::vector<rank_id> decode_ranks{decode_rank, second_decode_rank};
  EXPECT_FALSE(sender.open(request, source, decode_ranks));
  const auto told = control.of_kind(control_kind::status);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1].to, second_decode_rank);
  EXPECT_EQ(told[1].message.status, kv_status::failed);
}

// --- authority ----------------------------------------------------------------------------

TEST_F(PrefillSender, EverythingItTellsDecodeBearsItsProofUnderTheirLink) {
  source = ledger.allocate(request, 4).value();
  const std::vector<rank_id> decode_ranks{decode_rank};
  ASSERT_TRUE(sender.open(request, source, decode_ranks));
  ASSERT_TRUE(send(1));
  sender.on_abort(abort_from(decode_rank, decode_tokens));
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  sender.finish(request);
  const message_mac link(derive_link_key(test_key(), prefill_rank, decode_rank));
  const message_mac other_link(derive_link_key(test_key(), prefill_rank, second_decode_rank));
  for (const control_kind kind : {control_kind::abort_ack, control_kind::status}) {
    const auto sent = control.of_kind(kind);
    ASSERT_EQ(sent.size(), 1u) << static_cast<int>(kind);
    EXPECT_TRUE(link.verify(sent[0].message, decode_rank));
    EXPECT_FALSE(link.verify(sent[0].message, second_decode_rank)) << "bound to its receiver";
    EXPECT_FALSE(other_link.verify(sent[0].message, decode_rank)) << "bound to its link";
  }
}

TEST_F(PrefillSender, AnAbortFromADecodeRankTheRoomDoesNotServeTouchesNothing) {
  source = ledger.allocate(request, 4).value();
  const std::vector<rank_id> decode_ranks{decode_rank};
  ASSERT_TRUE(sender.open(request, source, decode_ranks));
  ASSERT_TRUE(send(1));
  // Rank 2 holds the keys of its own link to this rank and mints a genuine token on it.
  sender.on_abort(abort_from(second_decode_rank, second_decode_tokens));
  EXPECT_TRUE(lifetimes.is_admitting(request));
  EXPECT_NE(statuses.get(request), kv_status::failed);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::not_a_party);
  EXPECT_TRUE(control.of_kind(control_kind::abort_ack).empty());
}

TEST_F(PrefillSender, TheAbortMemoryOfARoomEndsWithTheRoomAndAReplayChangesNothing) {
  source = ledger.allocate(request, 4).value();
  ASSERT_TRUE(sender.open(request, source));
  ASSERT_TRUE(send(1));
  const control_message abort = abort_from(decode_rank, decode_tokens);
  sender.on_abort(abort);
  EXPECT_EQ(verifier.remembered(), 1u);
  transfers.end_all(transfer_poll::succeeded);
  sender.poll();
  sender.finish(request);
  ASSERT_FALSE(sender.tracking(request));
  EXPECT_EQ(verifier.remembered(), 0u) << "the room is over: so is its memory";
  // A replay of the ABORT, or a late first one from another decode rank: refused as retired,
  // answered as for a room this rank does not have (closed once, ACKed), remembered nowhere.
  sender.on_abort(abort);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::retired);
  const auto tombstones = lifetimes.tombstone_count();
  sender.on_abort(abort);
  sender.on_abort(abort_from(second_decode_rank, second_decode_tokens));
  EXPECT_EQ(lifetimes.tombstone_count(), tombstones) << "a close of a closed room adds nothing";
  EXPECT_TRUE(lifetimes.is_closed(request));
  EXPECT_EQ(control.of_kind(control_kind::abort_ack).size(), 4u);
  EXPECT_EQ(verifier.remembered(), 0u);
}

}  // namespace
}  // namespace kvsim::core::prefill_sender_test
