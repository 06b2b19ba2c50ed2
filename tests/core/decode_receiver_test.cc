#include "core/decode_receiver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fake_ports.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::decode_receiver_test {
namespace {

using testing::fake_clock;
using testing::fake_liveness;
using testing::fake_messenger;
using testing::recording_sink;

constexpr rank_id decode_rank = 2;
const std::vector<rank_id> prefill_ranks{0, 1};
const room_key request{7, 1};
const room_key older_request{7, 0};  // the same room id, the request before

cluster_key test_key() {
  cluster_key key;
  key.bytes.fill(5);
  return key;
}

class DecodeReceiver : public ::testing::Test {
 protected:
  explicit DecodeReceiver(variant v = variant::safe(), decode_limits limits = {})
      : receiver(decode_rank, {control, clock, sink, peers}, {ledger, issuer, verifier}, v,
                 limits) {}

  void start_and_abort(std::optional<std::uint64_t> deadline_us = std::nullopt) {
    ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
    receiver.publish(request);
    receiver.abort(request, deadline_us);
  }
  // The drain-ACK prefill rank `from` sends back: it echoes decode's token.
  // Each prefill rank got its own token, bound to it.
  control_message ack_from(rank_id from) const {
    std::optional<abort_token> token;
    for (const auto& sent : control.of_kind(control_kind::abort)) {
      if (sent.to == from) token = sent.message.token;
    }
    return control_message{control_kind::abort_ack, from, request, token, {}, {}};
  }

  // `message` as its sender makes it: proven under the key of the link between the rank it
  // names and this decode rank (core/message_proof.h).
  static control_message proven(control_message message) {
    message.proof = message_mac(derive_link_key(test_key(), message.from, decode_rank))
                        .sign(message, decode_rank);
    return message;
  }
  void deliver(const control_message& message) { receiver.on_message(proven(message)); }

  recording_sink sink;
  fake_messenger control;
  fake_clock clock;
  fake_liveness peers;
  page_ledger ledger{decode_rank, 8, sink};
  abort_token_issuer issuer{decode_rank, test_key(), 1, sink};
  abort_token_verifier verifier{decode_rank, test_key(), sink};
  decode_receiver receiver;
};

TEST_F(DecodeReceiver, TheAbortIsArmedBeforeItIsSent) {
  start_and_abort();
  ASSERT_EQ(control.of_kind(control_kind::abort).size(), 2u);
  const auto armed = sink.last<abort_armed>();
  ASSERT_TRUE(armed.has_value());
  EXPECT_EQ(armed->expected_ranks, prefill_ranks);
  EXPECT_EQ(armed->nonce, control.of_kind(control_kind::abort)[0].message.token->nonce);
}

// The engine fails a request its pool cannot serve: no page is taken, every prefill rank is
// told with an armed ABORT, and the request is over here at once; its late ACKs find it retired.
TEST_F(DecodeReceiver, ARejectedRequestTakesNoPageAbortsEveryPrefillRankAndFinishesFailed) {
  receiver.reject(request, prefill_ranks);
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(control.of_kind(control_kind::abort).size(), 2u);
  EXPECT_TRUE(control.of_kind(control_kind::metadata).empty());
  ASSERT_TRUE(sink.last<abort_armed>().has_value());
  EXPECT_EQ(sink.last<request_finished>()->outcome, request_outcome::failed);
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(receiver.request_count(), 0u);
  deliver(ack_from(0));
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::retired);
  // Known already: a second reject, or a prealloc, changes nothing.
  receiver.reject(request, prefill_ranks);
  EXPECT_EQ(control.of_kind(control_kind::abort).size(), 2u);
  EXPECT_FALSE(receiver.prealloc(request, 2, prefill_ranks).has_value());
  EXPECT_TRUE(receiver.check_consistency().empty());
}

TEST_F(DecodeReceiver, PagesAreReleasedOnlyWhenEveryExpectedRankHasAcked) {
  start_and_abort();
  deliver(ack_from(0));
  deliver(ack_from(0));  // a duplicate counts once
  EXPECT_EQ(ledger.free_count(), 5u);
  EXPECT_FALSE(receiver.finished(request));
  deliver(ack_from(1));
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(sink.last<request_pages_released>()->reason, release_reason::all_acks);
}

TEST_F(DecodeReceiver, AnAckAfterTheRequestFinishedLeavesNothingInTheVerifier) {
  // A duplicated or delayed drain-ACK that lands after the last one settled the abort: the
  // finished request forgot its tokens, so a verifier that still checked (and remembered)
  // this one would keep it for good, one entry per late ACK for the life of the engine.
  start_and_abort();
  deliver(ack_from(0));
  deliver(ack_from(1));
  ASSERT_TRUE(receiver.finished(request));
  ASSERT_EQ(verifier.remembered(), 0u);
  deliver(ack_from(1));
  deliver(ack_from(0));
  EXPECT_EQ(verifier.remembered(), 0u);
  EXPECT_EQ(sink.count<drain_ack_counted>(), 2u);
}

TEST_F(DecodeReceiver, AnAckForTheOlderRequestOnTheSameRoomDoesNotCount) {
  start_and_abort();
  control_message stale = ack_from(0);
  stale.key = older_request;
  stale.token = issuer.issue(older_request, 0);
  deliver(stale);
  EXPECT_EQ(sink.count<drain_ack_counted>(), 0u);
}

TEST_F(DecodeReceiver, ADeadlineQuarantinesAndNeverFrees) {
  start_and_abort(100);
  clock.now = 150;
  receiver.check_deadlines();
  EXPECT_EQ(sink.last<deadline_expired>()->action, deadline_action::quarantined);
  EXPECT_EQ(ledger.free_count(), 5u);
  // A late ACK from both ranks still heals the request.
  deliver(ack_from(0));
  deliver(ack_from(1));
  EXPECT_EQ(ledger.free_count(), 8u);
}

TEST_F(DecodeReceiver, APrefillFailureIsDrainedLikeAnAbort) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  deliver(control_message{control_kind::status, 0, request, std::nullopt, {},
                                      kv_status::failed});
  EXPECT_EQ(control.of_kind(control_kind::abort).size(), 2u);
  EXPECT_EQ(ledger.free_count(), 5u);
}

TEST_F(DecodeReceiver, ACompletedRequestReleasesAsCompleted) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  deliver(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  EXPECT_FALSE(receiver.transfer_complete(request));
  deliver(control_message{control_kind::chunk_ready, 1, request, std::nullopt, {}, {}});
  ASSERT_TRUE(receiver.transfer_complete(request));
  receiver.complete(request);
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.last<request_finished>()->outcome, request_outcome::succeeded);
}

// --- authority: only the request's own prefill ranks, proven, echoing what was issued --------

constexpr rank_id stranger_rank = 9;  // a member of the cluster, party to no request here

TEST_F(DecodeReceiver, ChunkReadyFromARankNoPartyToTheRequestDoesNotComplete) {
  // Prefill ranks {0, 1}: rank 0's chunk_ready and one from rank 9 must not make the transfer
  // complete while rank 1 still writes, however well rank 9 proves its own message.
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  deliver(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  deliver(control_message{control_kind::chunk_ready, stranger_rank, request, std::nullopt, {}, {}});
  EXPECT_FALSE(receiver.transfer_complete(request));
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::not_a_party);
  deliver(control_message{control_kind::chunk_ready, 1, request, std::nullopt, {}, {}});
  EXPECT_TRUE(receiver.transfer_complete(request));
}

TEST_F(DecodeReceiver, AStrangersProgressHeldEarlyIsCheckedAtPublish) {
  // Held before the request registered, delivered at publish: the sender is checked then.
  deliver(control_message{control_kind::chunk_ready, stranger_rank, request, std::nullopt, {}, {}});
  deliver(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  EXPECT_FALSE(receiver.transfer_complete(request));
  EXPECT_EQ(sink.count<token_rejected>(), 1u);
}

TEST_F(DecodeReceiver, AFailedStatusFromAStrangerAbortsNothing) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  deliver(control_message{control_kind::status, stranger_rank, request, std::nullopt, {},
                          kv_status::failed});
  EXPECT_TRUE(control.of_kind(control_kind::abort).empty());
  EXPECT_FALSE(receiver.aborting(request));
}

TEST_F(DecodeReceiver, ProgressWithoutItsSendersProofIsRefusedAndNotHeld) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  // Claims rank 0 and 1, proven by nobody (or by a rank that is neither): no key, no authority.
  receiver.on_message(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  control_message relabelled = proven({control_kind::chunk_ready, stranger_rank, request, std::nullopt, {}, {}});
  relabelled.from = 1;
  receiver.on_message(relabelled);
  EXPECT_FALSE(receiver.transfer_complete(request));
  EXPECT_EQ(sink.count<token_rejected>(), 2u);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::unproven);
  // Not held early either: a rank without the key cannot fill the buffer.
  receiver.on_message(control_message{control_kind::chunk_ready, 0, {99, 0}, std::nullopt, {}, {}});
  EXPECT_EQ(receiver.early_held(), 0u);
}

TEST_F(DecodeReceiver, AnAbortsTokenEchoedWithoutItsAudiencesProofIsNotCounted) {
  // Whoever saw the ABORT go by holds its token; only its audience can prove the ACK.
  start_and_abort();
  control_message echo = proven(ack_from(0));
  echo.proof = message_mac(derive_link_key(test_key(), stranger_rank, decode_rank)).sign(echo, decode_rank);
  receiver.on_message(echo);
  receiver.on_message(ack_from(1));  // no proof at all
  EXPECT_EQ(sink.count<drain_ack_counted>(), 0u);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::unproven);
  // The genuine ACKs still count: the echoes used up nothing.
  deliver(ack_from(0));
  deliver(ack_from(1));
  EXPECT_TRUE(receiver.finished(request));
}

TEST_F(DecodeReceiver, AnAckWithATokenThisRankDidNotIssueIsNotCounted) {
  // A holder of the link's key mints a token for this very (room, generation) and proves its
  // ACK: genuine, between the right parties, and still not the token the abort sent.
  start_and_abort();
  abort_token_issuer minter{decode_rank, test_key(), 77, sink};
  control_message minted = ack_from(0);
  minted.token = minter.issue(request, 0);
  deliver(minted);
  EXPECT_EQ(sink.count<drain_ack_counted>(), 0u);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::not_issued);
  deliver(ack_from(0));
  EXPECT_EQ(sink.count<drain_ack_counted>(), 1u);
}

TEST_F(DecodeReceiver, AnAckFromAStrangerWithItsOwnTokenIsNotCounted) {
  start_and_abort();
  abort_token_issuer same_rank{decode_rank, test_key(), 1, sink};
  control_message own{control_kind::abort_ack, stranger_rank, request,
                      same_rank.issue(request, stranger_rank), {}, {}};
  deliver(own);
  EXPECT_EQ(sink.count<drain_ack_counted>(), 0u);
  EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::not_a_party);
}

TEST(DecodeReceiverRestart, AnAckCapturedBeforeARestartIsNotCounted) {
  // The same (room, generation) aborted in two lives of the decode rank (a restart: empty
  // memories, a fresh epoch). Prefill's proven ACK of the first life, replayed into the second,
  // must not free the second life's pages while prefill still writes them.
  recording_sink sink;
  fake_messenger control;
  fake_clock clock;
  fake_liveness peers;
  control_message captured;
  for (std::uint64_t epoch : {1u, 2u}) {
    page_ledger ledger{decode_rank, 8, sink};
    abort_token_issuer issuer{decode_rank, test_key(), epoch, sink};
    abort_token_verifier verifier{decode_rank, test_key(), sink};
    decode_receiver receiver(decode_rank, {control, clock, sink, peers}, {ledger, issuer, verifier},
                             variant::safe());
    ASSERT_TRUE(receiver.prealloc(request, 3, {0}).has_value());
    receiver.publish(request);
    receiver.abort(request, std::nullopt);
    if (epoch == 1) {
      captured = {control_kind::abort_ack, 0, request,
                  control.of_kind(control_kind::abort).back().message.token, {}, {}};
      captured.proof = message_mac(derive_link_key(test_key(), 0, decode_rank)).sign(captured, decode_rank);
      continue;
    }
    receiver.on_message(captured);
    EXPECT_FALSE(receiver.finished(request));
    EXPECT_EQ(ledger.free_count(), 5u);
    EXPECT_EQ(sink.last<token_rejected>()->reason, token_rejection::not_issued);
  }
}

// --- peer death ----------------------------------------------------------------------------

TEST_F(DecodeReceiver, ALostPrefillRankAbortsTheRequestAndQuarantinesItsPages) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  peers.states[0] = peer_state::lost;
  receiver.check_peers();
  EXPECT_TRUE(receiver.aborting(request));
  EXPECT_EQ(control.of_kind(control_kind::abort).size(), 2u) << "the survivors must drain too";
  EXPECT_EQ(sink.last<peer_death_handled>()->action, peer_death_action::quarantined);
  ASSERT_TRUE(sink.last<lease_quarantined>().has_value());
  EXPECT_EQ(sink.last<lease_quarantined>()->pages, receiver.pages(request));
  EXPECT_EQ(ledger.quarantined_page_count(), 3u);
  // The survivor drains, but the dead rank's posted writes may still land: nothing is freed.
  deliver(ack_from(1));
  receiver.check_peers();
  EXPECT_EQ(ledger.free_count(), 5u);
  EXPECT_FALSE(receiver.finished(request));
  EXPECT_EQ(sink.count<peer_death_handled>(), 1u) << "a loss is handled once per request";
}

TEST_F(DecodeReceiver, TheTransportsTeardownConfirmsTheQuarantineAndFrees) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  peers.states[0] = peer_state::lost;
  receiver.check_peers();
  peers.states[0] = peer_state::torn_down;
  receiver.check_peers();
  EXPECT_EQ(sink.last<teardown_counted>()->settled, 1u);
  EXPECT_EQ(ledger.free_count(), 5u) << "rank 1 has not drained yet";
  deliver(ack_from(1));
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(ledger.quarantined_page_count(), 0u);
  EXPECT_EQ(sink.count<quarantine_confirmed>(), 1u);
  EXPECT_EQ(sink.last<request_pages_released>()->reason, release_reason::acks_and_teardowns);
}

TEST_F(DecodeReceiver, ARankTornDownBeforeTheRequestNeedsNoQuarantine) {
  peers.states[0] = peer_state::torn_down;
  peers.states[1] = peer_state::torn_down;
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.check_peers();
  EXPECT_EQ(sink.last<peer_death_handled>()->action, peer_death_action::already_torn_down);
  EXPECT_EQ(sink.count<lease_quarantined>(), 0u);
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(ledger.free_count(), 8u);
}

TEST_F(DecodeReceiver, ARankThatReportedItsChunksBeforeDyingDoesNotAbortTheRequest) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  deliver(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  peers.states[0] = peer_state::lost;
  receiver.check_peers();
  EXPECT_FALSE(receiver.aborting(request));
  deliver(control_message{control_kind::chunk_ready, 1, request, std::nullopt, {}, {}});
  EXPECT_TRUE(receiver.transfer_complete(request));
}

TEST_F(DecodeReceiver, ADeadlineQuarantineIsALedgerQuarantineThatATeardownConfirms) {
  start_and_abort(100);
  deliver(ack_from(1));
  clock.now = 150;
  receiver.check_deadlines();
  EXPECT_TRUE(receiver.quarantined(request));
  EXPECT_EQ(ledger.quarantined_page_count(), 3u);
  peers.states[0] = peer_state::lost;
  receiver.check_peers();
  EXPECT_EQ(sink.count<lease_quarantined>(), 1u) << "one quarantine per request";
  peers.states[0] = peer_state::torn_down;
  receiver.check_peers();
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.count<quarantine_confirmed>(), 1u);
}

struct historical : DecodeReceiver {
  explicit historical(bug b) : DecodeReceiver(variant::with(b)) {}
};
struct DecodeReceiverB1 : historical {
  DecodeReceiverB1() : historical(bug::b1_destination_reuse) {}
};
struct DecodeReceiverB8 : historical {
  DecodeReceiverB8() : historical(bug::b8_local_failure_release) {}
};
struct DecodeReceiverB11 : historical {
  DecodeReceiverB11() : historical(bug::b11_stale_ack) {}
};
struct DecodeReceiverB12 : historical {
  DecodeReceiverB12() : historical(bug::b12_deadline_release) {}
};

TEST_F(DecodeReceiverB1, HistoricalReleaseAtAbort) {
  start_and_abort();
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.last<request_pages_released>()->reason, release_reason::at_abort);
}

TEST_F(DecodeReceiverB8, HistoricalPrefillFailureReleasesAtOnce) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  deliver(control_message{control_kind::status, 0, request, std::nullopt, {},
                                      kv_status::failed});
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_TRUE(control.of_kind(control_kind::abort).empty());
}

TEST_F(DecodeReceiverB8, HistoricalLostHeartbeatFreesWhileTheDeadRanksWritesMayLand) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  peers.states[0] = peer_state::lost;
  receiver.check_peers();
  EXPECT_EQ(sink.last<peer_death_handled>()->action, peer_death_action::released);
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.count<lease_quarantined>(), 0u);
}

TEST_F(DecodeReceiverB11, HistoricalStaleAckCountsForTheNewRequest) {
  start_and_abort();
  control_message stale = ack_from(0);
  stale.key = older_request;
  stale.token = std::nullopt;
  deliver(stale);
  EXPECT_EQ(sink.count<drain_ack_counted>(), 1u);
}

TEST_F(DecodeReceiverB12, HistoricalDeadlineReleases) {
  start_and_abort(100);
  clock.now = 100;
  receiver.check_deadlines();
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(sink.last<deadline_expired>()->action, deadline_action::released);
}

}  // namespace
}  // namespace kvsim::core::decode_receiver_test

namespace kvsim::core::decode_receiver_test {
namespace {

// A former defect: decode never forgot a request, so memory and every deadline/peer scan grew
// with the requests ever served. Before the fix request_count() stayed at 1 here.
TEST_F(DecodeReceiver, AFinishedRequestIsForgottenButStillAnswersFinished) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  receiver.complete(request);
  EXPECT_EQ(receiver.request_count(), 0u);
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_FALSE(receiver.prealloc(request, 3, prefill_ranks).has_value())
      << "a finished request registered again";
  EXPECT_EQ(ledger.free_count(), 8u);
}

// A former defect: a failed status that arrives before decode registered the request was
// dropped (the simulated world buffered it instead). Now the core holds it until the request is
// published and then drains as for any failure: it aborts and waits for every drain-ACK.
// Before the fix no ABORT went out here and the request waited for a transfer forever.
TEST_F(DecodeReceiver, AFailedStatusThatCameEarlyIsHeldAndActedOnAtPublish) {
  deliver(
      control_message{control_kind::status, 0, request, std::nullopt, {}, kv_status::failed});
  EXPECT_EQ(receiver.early_held(), 1u);
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  EXPECT_TRUE(control.of_kind(control_kind::abort).empty()) << "acted on before the metadata went";
  receiver.publish(request);
  EXPECT_EQ(receiver.early_held(), 0u);
  EXPECT_TRUE(receiver.aborting(request));
  EXPECT_EQ(control.of_kind(control_kind::abort).size(), 2u);
}

// The receiver's books (per-rank index, deadline set, finished record, early buffer) agree
// with its live requests after every kind of step: what the quiescence audit relies on when it
// reports a disagreement as a leak.
TEST_F(DecodeReceiver, TheBooksAgreeThroughEveryPath) {
  const auto consistent = [&](const char* after) {
    EXPECT_EQ(receiver.check_consistency(), std::vector<std::string>{}) << "after " << after;
  };
  const room_key early{9, 0};
  const room_key aborted{10, 0};
  deliver(control_message{control_kind::chunk_ready, 0, early, std::nullopt, {}, {}});
  consistent("a message held early");
  ASSERT_TRUE(receiver.prealloc(request, 2, prefill_ranks).has_value());
  ASSERT_TRUE(receiver.prealloc(early, 2, {0}).has_value());
  ASSERT_TRUE(receiver.prealloc(aborted, 2, {1, 1}).has_value());  // a rank named twice
  consistent("three preallocs");
  receiver.publish(early);
  receiver.publish(request);
  receiver.publish(aborted);
  consistent("publish, the early message delivered");
  receiver.abort(aborted, 50);
  consistent("an abort with a deadline");
  clock.now = 60;
  receiver.check_deadlines();
  consistent("the deadline passed");
  receiver.complete(early);
  consistent("a completion");
  receiver.abort(request, std::nullopt);
  deliver(ack_from(0));
  deliver(ack_from(1));
  consistent("an abort drained by both ACKs");
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_TRUE(receiver.finished(early));
}

TEST_F(DecodeReceiver, AnEarlyChunkReadyCountsOnceTheRequestIsPublished) {
  for (rank_id from : prefill_ranks) {
    deliver(control_message{control_kind::chunk_ready, from, request, std::nullopt, {}, {}});
  }
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  EXPECT_TRUE(receiver.transfer_complete(request));
}

TEST_F(DecodeReceiver, LateNewsOfAFinishedRequestIsDroppedNotHeld) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  receiver.complete(request);
  deliver(control_message{control_kind::chunk_ready, 0, request, std::nullopt, {}, {}});
  EXPECT_EQ(receiver.early_held(), 0u);
}

// The policy when the early buffer is full: the oldest request's messages go, with an event;
// a newer generation's registration drops what an older one of its room still holds.
// A receiver that remembers little: 16 finished requests, early messages of 2.
class DecodeReceiverBounds : public DecodeReceiver {
 protected:
  DecodeReceiverBounds() : DecodeReceiver(variant::safe(), decode_limits{16, 2}) {}
};

TEST_F(DecodeReceiverBounds, TheEarlyBufferIsBoundedAndOlderGenerationsAreDropped) {
  const auto ready = [&](room_key key) {
    deliver(control_message{control_kind::chunk_ready, 0, key, std::nullopt, {}, {}});
  };
  ready({30, 0});
  ready({31, 0});
  ready({32, 0});
  EXPECT_EQ(receiver.early_held(), 2u);
  const auto dropped = sink.last<early_messages_dropped>();
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(dropped->key, (room_key{30, 0}));
  ASSERT_TRUE(receiver.prealloc({31, 1}, 1, prefill_ranks).has_value());
  receiver.publish({31, 1});
  EXPECT_EQ(receiver.early_held(), 1u) << "generation 0 of room 31 can no longer register";
  EXPECT_EQ(sink.last<early_messages_dropped>()->key, (room_key{31, 0}));
}

// Many requests served, few live: the receiver's books follow the live ones.
TEST_F(DecodeReceiver, ItsBooksFollowTheLiveRequestsNotTheServedOnes) {
  for (generation_t g = 0; g < 200; ++g) {
    const room_key key{100 + g % 7, g};
    ASSERT_TRUE(receiver.prealloc(key, 2, prefill_ranks).has_value());
    receiver.publish(key);
    if (g % 2 == 0) {
      receiver.complete(key);
    } else {
      receiver.abort(key, clock.now_us() + 5);
      for (const auto& sent : control.of_kind(control_kind::abort)) {
        if (sent.message.key != key) continue;
        deliver(
            control_message{control_kind::abort_ack, sent.to, key, sent.message.token, {}, {}});
      }
    }
    receiver.check_deadlines();
  }
  EXPECT_EQ(receiver.request_count(), 0u);
  EXPECT_EQ(verifier.remembered(), 0u);
  EXPECT_EQ(ledger.free_count(), 8u);
}

}  // namespace
}  // namespace kvsim::core::decode_receiver_test

namespace kvsim::core::decode_receiver_test {
namespace {

// A former defect: decode never leased the pages it receives into, so an engine that gave them
// back while prefill's transport could still write freed them at once. Before the fix the pool
// had all 8 pages free right after the engine's release below.
TEST_F(DecodeReceiver, AReleaseOfPagesBeingReceivedIntoIsDeferredByTheLedger) {
  ASSERT_TRUE(receiver.prealloc(request, 3, prefill_ranks).has_value());
  receiver.publish(request);
  EXPECT_EQ(ledger.active_lease_count(), 1u) << "the destination pages are leased from publish on";
  ASSERT_TRUE(ledger.release_all(request));  // an impatient engine, mid-transfer
  EXPECT_EQ(ledger.free_count(), 5u) << "freed while prefill's transport may still write them";
  EXPECT_EQ(ledger.retiring_count(), 3u);
  for (rank_id from : prefill_ranks) {
    deliver(control_message{control_kind::chunk_ready, from, request, std::nullopt, {}, {}});
  }
  receiver.complete(request);
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_EQ(ledger.active_lease_count(), 0u);
}

}  // namespace
}  // namespace kvsim::core::decode_receiver_test

namespace kvsim::core::decode_receiver_test {
namespace {

// A timeline replayed from a log pins decode's pages. The request is registered on exactly those
// pages, in their order, and published and freed like any other.
TEST_F(DecodeReceiver, APinnedRequestGetsExactlyItsPages) {
  const std::vector<page_index> pinned{5, 6, 2};
  EXPECT_EQ(receiver.prealloc_exact(request, pinned, prefill_ranks), pinned);
  EXPECT_EQ(receiver.pages(request), pinned);
  receiver.publish(request);
  ASSERT_EQ(control.of_kind(control_kind::metadata).size(), 2u);
  EXPECT_EQ(control.of_kind(control_kind::metadata)[0].message.pages, pinned);
  EXPECT_FALSE(receiver.prealloc_exact(request, std::vector<page_index>{0}, prefill_ranks))
      << "a live request registered twice";
  receiver.abort(request, std::nullopt);
  deliver(ack_from(0));
  deliver(ack_from(1));
  EXPECT_TRUE(receiver.finished(request));
  EXPECT_EQ(ledger.free_count(), 8u);
  EXPECT_TRUE(receiver.check_consistency().empty());
}

// A pinned page the older request still holds: the ledger refuses (misuse, emitted) and the
// request is not registered, so the caller can wait and try again.
TEST_F(DecodeReceiver, APinnedPageThatIsNotFreeRegistersNothing) {
  const auto older = receiver.prealloc(older_request, 2, prefill_ranks).value();
  sink.clear();
  EXPECT_FALSE(receiver.prealloc_exact(request, std::vector<page_index>{7, older[1]}, prefill_ranks));
  EXPECT_EQ(receiver.request_count(), 1u);
  EXPECT_EQ(ledger.free_count(), 6u);
  ASSERT_EQ(sink.count<ledger_misuse>(), 1u);
  EXPECT_EQ(sink.last<ledger_misuse>()->error, ledger_error::page_not_free);
  receiver.publish(older_request);
  receiver.complete(older_request);
  EXPECT_EQ(receiver.prealloc_exact(request, std::vector<page_index>{7, older[1]}, prefill_ranks),
            (std::vector<page_index>{7, older[1]}));
}

}  // namespace
}  // namespace kvsim::core::decode_receiver_test
