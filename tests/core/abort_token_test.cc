#include "core/abort_token.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <sodium.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "core/events.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::abort_token_test {
namespace {

using testing::recording_sink;

const room_key request_a{7, 0};
const room_key request_a_next{7, 1};  // the same room id, reused by the next request
const room_key request_b{8, 0};

constexpr rank_id decode_rank = 10;
constexpr rank_id verifier_rank = 10;
constexpr rank_id prefill_rank = 0;
constexpr rank_id second_prefill_rank = 1;

cluster_key make_key(std::uint8_t seed) {
  cluster_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) {
    key.bytes[i] = static_cast<std::uint8_t>(seed * 31u + i * 7u + 1u);
  }
  return key;
}

const cluster_key our_cluster = make_key(1);
const cluster_key other_cluster = make_key(2);

// The drain-ACK `presenter` sends to `verifier`'s rank with `token`, proven under the key of
// their link in `cluster`, and checked as the ACK of an abort that issued exactly `token`.
status<token_rejection> ack_from(abort_token_verifier& verifier, const abort_token& token,
                                 room_key expected, rank_id presenter,
                                 const cluster_key& cluster = our_cluster) {
  control_message ack{control_kind::abort_ack, presenter, expected, token, {}, {}};
  ack.proof = message_mac(derive_link_key(cluster, presenter, verifier.rank())).sign(ack, verifier.rank());
  return verifier.accept_ack(ack, expected, true, &token);
}

class AbortTokens : public ::testing::Test {
 protected:
  // The last event is a rejection of `token` for `expected` with `reason`.
  void expect_rejected(const abort_token& token, room_key expected, token_rejection reason) {
    ASSERT_FALSE(sink.events().empty());
    ASSERT_TRUE(std::holds_alternative<token_rejected>(sink.events().back().body))
        << describe(sink.events().back());
    const auto rejected = std::get<token_rejected>(sink.events().back().body);
    EXPECT_EQ(rejected.reason, reason) << to_string(rejected.reason);
    EXPECT_EQ(rejected.expected, expected);
    EXPECT_EQ(rejected.claimed, token.key);
    EXPECT_EQ(rejected.nonce, token.nonce);
    EXPECT_EQ(sink.events().back().rank, verifier_rank);
  }

  // `token` is refused with `reason`, emits exactly that rejection, and is not remembered.
  void expect_refusal(const abort_token& token, room_key expected, rank_id presenter,
                      token_rejection reason) {
    const auto remembered = verifier.remembered();
    sink.clear();
    const auto outcome = ack_from(verifier, token, expected, presenter);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error(), reason) << to_string(outcome.error());
    ASSERT_EQ(sink.size(), 1u);
    expect_rejected(token, expected, reason);
    EXPECT_EQ(verifier.remembered(), remembered);
  }

  recording_sink sink;
  abort_token_issuer issuer{decode_rank, our_cluster, 1, sink};
  abort_token_verifier verifier{verifier_rank, our_cluster, sink};
};

TEST_F(AbortTokens, IssueBindsTheRoomGenerationAndIssuerAndIsEmitted) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  EXPECT_EQ(token.key, request_a);
  EXPECT_EQ(token.issuer, decode_rank);
  EXPECT_EQ(token.nonce, 1u);
  EXPECT_TRUE(is_authentic(token, our_cluster));
  EXPECT_FALSE(is_authentic(token, other_cluster));
  ASSERT_EQ(sink.size(), 1u);
  EXPECT_EQ(sink.events()[0].rank, decode_rank);
  const auto issued = sink.last<token_issued>();
  ASSERT_TRUE(issued.has_value());
  EXPECT_EQ(issued->key, request_a);
  EXPECT_EQ(issued->nonce, token.nonce);
}

TEST_F(AbortTokens, NoncesStrictlyIncreasePerIssuer) {
  abort_token_issuer another{decode_rank + 1, our_cluster, 1, sink};
  std::uint64_t last = 0;
  for (const room_key& key : {request_a, request_a, request_b, request_a_next, request_a}) {
    const abort_token token = issuer.issue(key, prefill_rank);
    EXPECT_GT(token.nonce, last);
    last = token.nonce;
    // Another issuer's tokens do not advance this issuer's nonces.
    (void)another.issue(key, prefill_rank);
  }
  const abort_token first_of_another = abort_token_issuer{decode_rank + 2, our_cluster, 1, sink}
                                           .issue(request_a, prefill_rank);
  EXPECT_EQ(first_of_another.nonce, 1u) << "nonces are per issuer";
}

TEST_F(AbortTokens, TwoTokensForTheSameRoomAreDistinct) {
  const abort_token first = issuer.issue(request_a, prefill_rank);
  const abort_token second = issuer.issue(request_a, prefill_rank);
  EXPECT_NE(first.nonce, second.nonce);
  EXPECT_NE(first.mac, second.mac);
  EXPECT_TRUE(ack_from(verifier, first, request_a, prefill_rank));
  EXPECT_TRUE(ack_from(verifier, second, request_a, prefill_rank))
      << "a second ABORT for the same room carries a fresh token";
}

TEST_F(AbortTokens, AGenuineTokenIsAcceptedOnceForItsRoomAndGeneration) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  sink.clear();
  ASSERT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  ASSERT_EQ(sink.size(), 1u);
  const auto accepted = sink.last<token_accepted>();
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->key, request_a);
  EXPECT_EQ(accepted->nonce, token.nonce);
  EXPECT_EQ(sink.events()[0].rank, verifier_rank);
  EXPECT_EQ(verifier.remembered(), 1u);
}

TEST_F(AbortTokens, TheSameTokenAgainFromTheSamePresenterIsADuplicate) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  ASSERT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  expect_refusal(token, request_a, prefill_rank, token_rejection::duplicate);
}

// An attack the MAC once allowed: it did not cover who presents the token, so one prefill peer
// could present another's token as that peer's drain-ACK and decode freed early. Before the fix
// the second prefill rank's echo below was accepted as its ACK.
TEST_F(AbortTokens, OnePrefillPeersTokenNeverServesForAnothersAck) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  expect_refusal(token, request_a, second_prefill_rank, token_rejection::foreign_issuer);
  // Rewriting the audience to the presenter breaks the MAC.
  abort_token readdressed = token;
  readdressed.audience = second_prefill_rank;
  expect_refusal(readdressed, request_a, second_prefill_rank, token_rejection::forged);
  // Its own audience's echo is the ACK, and each peer gets its own token.
  EXPECT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  const abort_token second = issuer.issue(request_a, second_prefill_rank);
  EXPECT_TRUE(ack_from(verifier, second, request_a, second_prefill_rank));
}

// An attack once possible: nonces restarted at 1 for every issuer, so a restarted decode rank
// minted the very tokens an earlier capture holds. The epoch drawn at start makes them differ.
TEST_F(AbortTokens, ARestartedIssuerNeverMintsATokenCapturedBeforeTheRestart) {
  const abort_token before = issuer.issue(request_a, prefill_rank);
  abort_token_issuer restarted{decode_rank, our_cluster, 2, sink};
  const abort_token after = restarted.issue(request_a, prefill_rank);
  EXPECT_EQ(before.nonce, after.nonce) << "the counter restarts";
  EXPECT_NE(before.epoch, after.epoch);
  EXPECT_NE(before.mac, after.mac);
  abort_token replayed = before;
  replayed.epoch = after.epoch;  // a capture passed off as the new epoch's
  expect_refusal(replayed, request_a, prefill_rank, token_rejection::forged);
}

// The roles are part of the binding: a prefill rank takes a token only as an ABORT from its
// issuer, a decode rank only as a drain-ACK from its audience, never the other way round.
TEST_F(AbortTokens, ATokenIsGoodInOneDirectionOnly) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  abort_token_verifier at_prefill{prefill_rank, our_cluster, sink};
  EXPECT_FALSE(ack_from(at_prefill, token, request_a, decode_rank)) << "an ABORT taken as an ACK";
  EXPECT_TRUE(at_prefill.accept_abort(token, request_a, decode_rank));
  EXPECT_FALSE(verifier.accept_abort(token, request_a, prefill_rank)) << "an ACK taken as an ABORT";
  EXPECT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
}

TEST(AbortTokenIssuerDeathTest, AnIssuerWithoutAnEpochRefusesToExist) {
  EXPECT_DEATH(
      {
        recording_sink sink;
        abort_token_issuer issuer(decode_rank, our_cluster, 0, sink);
      },
      "epoch");
}

TEST_F(AbortTokens, AStaleAckForTheOldIncarnationOfAReusedRoomIsRejected) {
  const abort_token old_token = issuer.issue(request_a, prefill_rank);
  expect_refusal(old_token, request_a_next, prefill_rank, token_rejection::stale_generation);
}

TEST_F(AbortTokens, ATokenForANewerIncarnationIsRejected) {
  const abort_token new_token = issuer.issue(request_a_next, prefill_rank);
  expect_refusal(new_token, request_a, prefill_rank, token_rejection::future_generation);
}

TEST_F(AbortTokens, ATokenForAnotherRoomIsRejected) {
  const abort_token token = issuer.issue(request_b, prefill_rank);
  expect_refusal(token, request_a, prefill_rank, token_rejection::foreign_room);
  // Another room with another generation is still foreign first.
  expect_refusal(token, request_a_next, prefill_rank, token_rejection::foreign_room);
}

TEST_F(AbortTokens, ARejectedPresentationDoesNotConsumeTheToken) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  expect_refusal(token, request_b, prefill_rank, token_rejection::foreign_room);
  expect_refusal(token, request_a_next, prefill_rank, token_rejection::stale_generation);
  EXPECT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
}

TEST_F(AbortTokens, EveryTamperedMacByteIsForged) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  for (std::size_t i = 0; i < token.mac.size(); ++i) {
    abort_token tampered = token;
    tampered.mac[i] ^= 0x01;
    EXPECT_FALSE(is_authentic(tampered, our_cluster)) << "mac byte " << i;
    expect_refusal(tampered, request_a, prefill_rank, token_rejection::forged);
  }
  EXPECT_TRUE(ack_from(verifier, token, request_a, prefill_rank)) << "the genuine one still works";
}

TEST_F(AbortTokens, TamperedFieldsAreForged) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  abort_token nonce = token;
  nonce.nonce += 1;
  expect_refusal(nonce, request_a, prefill_rank, token_rejection::forged);
  abort_token room = token;
  room.key.room = request_b.room;
  expect_refusal(room, request_b, prefill_rank, token_rejection::forged);
  abort_token generation = token;
  generation.key.generation = request_a_next.generation;
  expect_refusal(generation, request_a_next, prefill_rank, token_rejection::forged);
  abort_token issuer_rank = token;
  issuer_rank.issuer += 1;
  expect_refusal(issuer_rank, request_a, prefill_rank, token_rejection::forged);
  abort_token zero_mac = token;
  zero_mac.mac = {};
  expect_refusal(zero_mac, request_a, prefill_rank, token_rejection::forged);
}

TEST_F(AbortTokens, ATokenFromAnotherClusterIsForged) {
  recording_sink other_sink;
  abort_token_issuer foreign_issuer{decode_rank, other_cluster, 1, other_sink};
  const abort_token token = foreign_issuer.issue(request_a, prefill_rank);
  EXPECT_TRUE(is_authentic(token, other_cluster));
  expect_refusal(token, request_a, prefill_rank, token_rejection::forged);
}

TEST_F(AbortTokens, AKeyringIssuesAndVerifiesExactlyAsTheClusterKeyItself) {
  // A keyring holding only the rank's own links (the simulator prepares each link once per
  // process) must be the same keys: tokens cross both ways, and another cluster's links still
  // forge.
  const link_keyring decode_links(decode_rank + 1, our_cluster, {prefill_rank});
  const link_keyring verifier_links(verifier_rank, our_cluster, {prefill_rank});
  recording_sink prepared_sink;
  abort_token_issuer prepared_issuer{decode_rank + 1, decode_links, 1, prepared_sink};
  abort_token_verifier prepared_verifier{verifier_rank, verifier_links, prepared_sink};
  const abort_token from_prepared = prepared_issuer.issue(request_a, prefill_rank);
  EXPECT_TRUE(is_authentic(from_prepared, our_cluster));
  const abort_token from_key = issuer.issue(request_b, prefill_rank);
  EXPECT_EQ(verifier_links.find(prefill_rank)->tokens.sign(from_key), from_key.mac);
  EXPECT_TRUE(ack_from(prepared_verifier, from_key, request_b, prefill_rank).ok());

  const link_keyring foreign_links(decode_rank, other_cluster, {prefill_rank});
  abort_token_issuer foreign_issuer{decode_rank, foreign_links, 1, prepared_sink};
  const abort_token forged = foreign_issuer.issue(request_a, prefill_rank);
  EXPECT_FALSE(is_authentic(forged, our_cluster));
  expect_refusal(forged, request_a, prefill_rank, token_rejection::forged);
}

TEST_F(AbortTokens, ForgedIsCheckedBeforeTheDuplicateMemory) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  ASSERT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  abort_token tampered = token;
  tampered.mac[0] ^= 0x80;
  expect_refusal(tampered, request_a, prefill_rank, token_rejection::forged);
}

// An attack once possible: after forget(K) a replayed token of K was accepted again. Now forget
// retires K: its memory goes, and its tokens are refused from then on.
TEST_F(AbortTokens, AfterForgetAReplayedTokenIsRefusedAsRetired) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  const abort_token second = issuer.issue(request_a, second_prefill_rank);
  const abort_token other = issuer.issue(request_a_next, prefill_rank);
  ASSERT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  ASSERT_TRUE(ack_from(verifier, second, request_a, second_prefill_rank));
  ASSERT_TRUE(ack_from(verifier, other, request_a_next, prefill_rank));
  EXPECT_EQ(verifier.remembered(), 3u);

  verifier.forget(request_a);
  EXPECT_EQ(verifier.remembered(), 1u) << "only the forgotten (room, generation) is dropped";
  expect_refusal(token, request_a, prefill_rank, token_rejection::retired);
  expect_refusal(second, request_a, second_prefill_rank, token_rejection::retired);
  expect_refusal(other, request_a_next, prefill_rank, token_rejection::duplicate);
}

TEST_F(AbortTokens, ForgettingAnotherRoomTouchesNoMemoryOfThisOne) {
  const abort_token token = issuer.issue(request_a, prefill_rank);
  ASSERT_TRUE(ack_from(verifier, token, request_a, prefill_rank));
  verifier.forget(request_b);
  verifier.forget(request_a_next);
  EXPECT_EQ(verifier.remembered(), 1u);
  expect_refusal(token, request_a, prefill_rank, token_rejection::duplicate);
}

// The duplicate memory is bounded: the oldest (room, generation)'s memory goes when full.
TEST(AbortTokenVerifierBounds, TheDuplicateMemoryKeepsAtMostItsCapacityOfRooms) {
  recording_sink sink;
  abort_token_issuer issuer{decode_rank, our_cluster, 1, sink};
  abort_token_verifier verifier{verifier_rank, our_cluster, sink, 2};
  for (room_id room = 0; room < 5; ++room) {
    ASSERT_TRUE(ack_from(verifier, issuer.issue({room, 0}, prefill_rank), {room, 0}, prefill_rank));
  }
  EXPECT_EQ(verifier.remembered(), 2u);
}

// --- properties over random keys, rooms and generations ------------------------------------

// Drawn as raw bytes so that a counterexample shows the key.
cluster_key any_cluster_key() {
  cluster_key key;
  key.bytes = *rc::gen::arbitrary<std::array<std::uint8_t, abort_key_bytes>>();
  return key;
}

room_key any_room_key() {
  return {*rc::gen::arbitrary<room_id>(), *rc::gen::arbitrary<generation_t>()};
}

template <class T>
T any_nonzero() {
  return *rc::gen::nonZero<T>();
}

// One verifier with the sink it reports to, for a property case.
TEST_F(AbortTokens, AnAckForAnotherDecodeRanksAbortIsRefusedAsForged) {
  // MLA fan-out (DOMAIN.md B6): decode ranks 10 and 11 both abort room 7; prefill echoes
  // rank 11's token to rank 10 by mistake. It must not count as rank 10's drain-ACK.
  // Made under the key of rank 11's link to prefill, which rank 10 does not hold: forged here.
  abort_token_issuer other_decode{decode_rank + 1, our_cluster, 1, sink};
  const abort_token theirs = other_decode.issue(request_a, prefill_rank);
  expect_refusal(theirs, request_a, prefill_rank, token_rejection::forged);
  // Presented by its own issuer to its audience (rank 11's ABORT at prefill) it is genuine.
  abort_token_verifier at_prefill{prefill_rank, our_cluster, sink};
  EXPECT_TRUE(at_prefill.accept_abort(theirs, request_a, decode_rank + 1));
}

struct verifier_case {
  explicit verifier_case(const cluster_key& cluster) : key(cluster), verifier(verifier_rank, cluster, sink) {}
  cluster_key key;
  recording_sink sink;
  abort_token_verifier verifier;

  void assert_rejected(const abort_token& token, room_key expected, rank_id presenter,
                       token_rejection reason) {
    const auto remembered = verifier.remembered();
    sink.clear();
    const auto outcome = ack_from(verifier, token, expected, presenter, key);
    RC_ASSERT(!outcome.ok());
    RC_ASSERT(outcome.error() == reason);
    RC_ASSERT(sink.size() == 1u);
    const auto rejected = sink.last<token_rejected>();
    RC_ASSERT(rejected.has_value());
    RC_ASSERT(rejected->reason == reason);
    RC_ASSERT(rejected->expected == expected);
    RC_ASSERT(rejected->claimed == token.key);
    RC_ASSERT(rejected->nonce == token.nonce);
    RC_ASSERT(verifier.remembered() == remembered);
  }
};

abort_token issue_one(const cluster_key& key, room_key room, rank_id issuer_rank,
                      rank_id audience, std::uint32_t earlier_tokens) {
  recording_sink sink;
  abort_token_issuer issuer(issuer_rank, key, *rc::gen::nonZero<std::uint64_t>(), sink);
  for (std::uint32_t i = 0; i < earlier_tokens; ++i) (void)issuer.issue(room, audience);
  return issuer.issue(room, audience);
}

// A genuine token of a link the verifier is party to (only those can verify there): issued by
// the verifier's rank to any audience.
abort_token any_genuine_token(const cluster_key& key, room_key room) {
  return issue_one(key, room, verifier_rank, *rc::gen::arbitrary<rank_id>(),
                   *rc::gen::inRange<std::uint32_t>(0, 4));
}

RC_GTEST_PROP(AbortTokenProperty, AGenuineAckIsAcceptedOnceFromItsAudienceOnly, ()) {
  const cluster_key key = any_cluster_key();
  const room_key room = any_room_key();
  // Echoed back to its issuer (the verifier's rank) by its audience.
  const rank_id audience = *rc::gen::arbitrary<rank_id>();
  RC_PRE(audience != verifier_rank);
  const abort_token token =
      issue_one(key, room, verifier_rank, audience, *rc::gen::inRange<std::uint32_t>(0, 4));
  RC_ASSERT(is_authentic(token, key));
  verifier_case c(key);
  // Any other peer presenting it is refused, before and after the genuine echo.
  const rank_id other = audience ^ any_nonzero<rank_id>();
  RC_PRE(other != verifier_rank);
  c.assert_rejected(token, room, other, token_rejection::foreign_issuer);
  RC_ASSERT(ack_from(c.verifier, token, room, audience, key).ok());
  RC_ASSERT(c.sink.last<token_accepted>().has_value());
  RC_ASSERT(c.sink.last<token_accepted>()->key == room);
  RC_ASSERT(c.sink.last<token_accepted>()->nonce == token.nonce);
  c.assert_rejected(token, room, audience, token_rejection::duplicate);
  c.assert_rejected(token, room, other, token_rejection::foreign_issuer);
  c.verifier.forget(room);
  RC_ASSERT(c.verifier.remembered() == 0u);
  c.assert_rejected(token, room, audience, token_rejection::retired);
}

enum class tamper { room, generation, issuer, audience, epoch, nonce, mac_byte };

void showValue(tamper t, std::ostream& os) {
  switch (t) {
    case tamper::room:
      os << "room";
      return;
    case tamper::generation:
      os << "generation";
      return;
    case tamper::issuer:
      os << "issuer";
      return;
    case tamper::audience:
      os << "audience";
      return;
    case tamper::epoch:
      os << "epoch";
      return;
    case tamper::nonce:
      os << "nonce";
      return;
    case tamper::mac_byte:
      os << "mac_byte";
      return;
  }
}

RC_GTEST_PROP(AbortTokenProperty, ATamperedTokenIsRejectedAsForged, ()) {
  const cluster_key key = any_cluster_key();
  const abort_token token = any_genuine_token(key, any_room_key());
  abort_token tampered = token;
  switch (*rc::gen::element(tamper::room, tamper::generation, tamper::issuer, tamper::audience,
                            tamper::epoch, tamper::nonce, tamper::mac_byte)) {
    case tamper::room:
      tampered.key.room ^= any_nonzero<room_id>();
      break;
    case tamper::generation:
      tampered.key.generation ^= any_nonzero<generation_t>();
      break;
    case tamper::issuer:
      tampered.issuer ^= any_nonzero<rank_id>();
      break;
    case tamper::audience:
      tampered.audience ^= any_nonzero<rank_id>();
      break;
    case tamper::epoch:
      tampered.epoch ^= any_nonzero<std::uint64_t>();
      break;
    case tamper::nonce:
      tampered.nonce ^= any_nonzero<std::uint64_t>();
      break;
    case tamper::mac_byte:
      tampered.mac[*rc::gen::inRange<std::size_t>(0, abort_mac_bytes)] ^=
          any_nonzero<std::uint8_t>();
      break;
  }
  RC_ASSERT(!(tampered == token));
  RC_ASSERT(!is_authentic(tampered, key));
  verifier_case c(key);
  // Whatever the verifier asks about, the token the forger changed or the original one.
  const room_key expected = *rc::gen::arbitrary<bool>() ? tampered.key : token.key;
  c.assert_rejected(tampered, expected, *rc::gen::arbitrary<rank_id>(), token_rejection::forged);
  // The genuine token, presented by its issuer to its audience, is unaffected.
  abort_token_verifier at_audience{token.audience, key, c.sink};
  RC_ASSERT(at_audience.accept_abort(token, token.key, token.issuer).ok());
}

RC_GTEST_PROP(AbortTokenProperty, AGenuineTokenPresentedByItsIssuerToItsAudienceIsAccepted, ()) {
  const cluster_key key = any_cluster_key();
  const room_key room = any_room_key();
  const abort_token token = any_genuine_token(key, room);
  recording_sink sink;
  abort_token_verifier at_audience{token.audience, key, sink};
  RC_ASSERT(at_audience.accept_abort(token, room, token.issuer).ok());
}

// DOMAIN.md B6: a token passes only between its issuer and its audience, in one direction per
// role. Genuine, right room and generation, and still refused otherwise.
RC_GTEST_PROP(AbortTokenProperty, AGenuineTokenOfThisRanksLinkFromAnotherPresenterIsForeignIssuer, ()) {
  const cluster_key key = any_cluster_key();
  const room_key room = any_room_key();
  const rank_id audience = *rc::gen::arbitrary<rank_id>();
  const abort_token token =
      issue_one(key, room, verifier_rank, audience, *rc::gen::inRange<std::uint32_t>(0, 4));
  const rank_id presenter = *rc::gen::arbitrary<rank_id>();
  RC_PRE(presenter != audience);
  verifier_case c(key);
  c.assert_rejected(token, room, presenter, token_rejection::foreign_issuer);
}

RC_GTEST_PROP(AbortTokenProperty, ATokenBetweenTwoOtherRanksIsForgedHere, ()) {
  // Made under the key of a link this rank is no party to: it holds no key to check it with.
  const cluster_key key = any_cluster_key();
  const room_key room = any_room_key();
  const rank_id issuer = *rc::gen::arbitrary<rank_id>();
  const rank_id audience = *rc::gen::arbitrary<rank_id>();
  RC_PRE(issuer != verifier_rank && audience != verifier_rank);
  const abort_token token =
      issue_one(key, room, issuer, audience, *rc::gen::inRange<std::uint32_t>(0, 4));
  verifier_case c(key);
  c.assert_rejected(token, room, audience, token_rejection::forged);
}

RC_GTEST_PROP(AbortTokenProperty, ATokenMadeWithAnotherClusterKeyIsRejectedAsForged, ()) {
  const cluster_key key = any_cluster_key();
  cluster_key other = key;
  if (*rc::gen::arbitrary<bool>()) {
    // A key that differs in one byte.
    other.bytes[*rc::gen::inRange<std::size_t>(0, abort_key_bytes)] ^=
        any_nonzero<std::uint8_t>();
  } else {
    other = any_cluster_key();
    RC_PRE(!(other.bytes == key.bytes));
  }
  const room_key room = any_room_key();
  const abort_token foreign = any_genuine_token(other, room);
  RC_ASSERT(is_authentic(foreign, other));
  RC_ASSERT(!is_authentic(foreign, key));
  verifier_case c(key);
  c.assert_rejected(foreign, room, *rc::gen::arbitrary<rank_id>(), token_rejection::forged);
}

RC_GTEST_PROP(AbortTokenProperty, AGenuineTokenOfAnOlderIncarnationIsRejectedAsStale, ()) {
  const cluster_key key = any_cluster_key();
  const room_id room = *rc::gen::arbitrary<room_id>();
  const generation_t older =
      *rc::gen::inRange<generation_t>(0, std::numeric_limits<generation_t>::max());
  const generation_t newer = static_cast<generation_t>(
      older + 1 +
      *rc::gen::inRange<generation_t>(0, std::numeric_limits<generation_t>::max() - older));
  RC_ASSERT(older < newer);
  const abort_token token = any_genuine_token(key, {room, older});
  verifier_case c(key);
  c.assert_rejected(token, {room, newer}, *rc::gen::arbitrary<rank_id>(),
                    token_rejection::stale_generation);
}

RC_GTEST_PROP(AbortTokenProperty, AGenuineTokenOfANewerIncarnationIsRejectedAsFuture, ()) {
  const cluster_key key = any_cluster_key();
  const room_id room = *rc::gen::arbitrary<room_id>();
  const generation_t older =
      *rc::gen::inRange<generation_t>(0, std::numeric_limits<generation_t>::max());
  const generation_t newer = static_cast<generation_t>(
      older + 1 +
      *rc::gen::inRange<generation_t>(0, std::numeric_limits<generation_t>::max() - older));
  const abort_token token = any_genuine_token(key, {room, newer});
  verifier_case c(key);
  c.assert_rejected(token, {room, older}, *rc::gen::arbitrary<rank_id>(),
                    token_rejection::future_generation);
}

RC_GTEST_PROP(AbortTokenProperty, AGenuineTokenForAnotherRoomIsRejectedAsForeign, ()) {
  const cluster_key key = any_cluster_key();
  const room_key room = any_room_key();
  const room_key expected{room.room ^ any_nonzero<room_id>(),
                          *rc::gen::arbitrary<generation_t>()};
  const abort_token token = any_genuine_token(key, room);
  verifier_case c(key);
  c.assert_rejected(token, expected, *rc::gen::arbitrary<rank_id>(),
                    token_rejection::foreign_room);
}

// A random stream of presentations, genuine or not, against one verifier: a token is
// accepted exactly when it was made with our key and not tampered with, names exactly the
// (room, generation) asked about, comes from its audience, is of no forgotten (room,
// generation), and this presenter has not shown it before; otherwise it is rejected with the
// first reason that applies.
struct presentation_source {
  abort_token token;
  bool genuine = false;  // issued under our cluster key
};

RC_GTEST_PROP(AbortTokenProperty, OnlyAGenuineUnseenTokenForTheExpectedRoomIsAccepted, ()) {
  const cluster_key key = any_cluster_key();
  cluster_key other = key;
  other.bytes[0] ^= 0xff;
  const std::vector<room_key> rooms{{1, 0}, {1, 1}, {2, 0}};
  recording_sink issue_sink;
  abort_token_issuer ours(decode_rank, key, 1, issue_sink);
  abort_token_issuer theirs(decode_rank, other, 1, issue_sink);
  std::vector<presentation_source> pool;
  for (const room_key& room : rooms) {
    pool.push_back({ours.issue(room, 0), true});
    pool.push_back({ours.issue(room, 1), true});
    pool.push_back({theirs.issue(room, 0), false});
  }

  verifier_case c(key);
  using seen_entry = std::tuple<room_key, rank_id, std::uint64_t, rank_id>;
  std::set<seen_entry> seen;
  std::set<room_key> retired;
  const int steps = *rc::gen::inRange(1, 40);
  for (int i = 0; i < steps; ++i) {
    const std::size_t pick = *rc::gen::inRange<std::size_t>(0, pool.size());
    abort_token token = pool[pick].token;
    bool genuine = pool[pick].genuine;
    if (*rc::gen::inRange(0, 4) == 0) {
      token.mac[*rc::gen::inRange<std::size_t>(0, abort_mac_bytes)] ^= 0x01;
      genuine = false;
    }
    const room_key expected = *rc::gen::elementOf(rooms);
    const rank_id presenter = *rc::gen::inRange<rank_id>(0, 2);
    if (*rc::gen::inRange(0, 8) == 0) {
      c.verifier.forget(expected);
      std::erase_if(seen, [&](const seen_entry& e) { return std::get<0>(e) == expected; });
      retired.insert(expected);
    }
    const seen_entry entry{token.key, token.issuer, token.nonce, presenter};
    std::optional<token_rejection> reason;
    if (!genuine) {
      reason = token_rejection::forged;
    } else if (token.key.room != expected.room) {
      reason = token_rejection::foreign_room;
    } else if (token.key.generation < expected.generation) {
      reason = token_rejection::stale_generation;
    } else if (token.key.generation > expected.generation) {
      reason = token_rejection::future_generation;
    } else if (presenter != token.audience) {
      reason = token_rejection::foreign_issuer;
    } else if (retired.contains(token.key)) {
      reason = token_rejection::retired;
    } else if (seen.contains(entry)) {
      reason = token_rejection::duplicate;
    }
    RC_ASSERT(is_authentic(token, key) == genuine);
    c.sink.clear();
    const auto outcome = ack_from(c.verifier, token, expected, presenter, key);
    RC_ASSERT(outcome.ok() == !reason.has_value());
    RC_ASSERT(c.sink.size() == 1u);
    if (!reason) {
      seen.insert(entry);
      RC_ASSERT(c.sink.last<token_accepted>().has_value());
      RC_ASSERT(c.sink.last<token_accepted>()->nonce == token.nonce);
    } else {
      RC_ASSERT(outcome.error() == *reason);
      RC_ASSERT(c.sink.last<token_rejected>().has_value());
      RC_ASSERT(c.sink.last<token_rejected>()->reason == *reason);
    }
    RC_ASSERT(c.verifier.remembered() == seen.size());
  }
}

// The MAC as the core computed it before it prepared the key state once per key:
// one-shot crypto_auth over the versioned domain tag and the token's fields, little-endian.
// Recorded tokens and any peer still on the old code depend on these bytes staying the same.
std::array<std::uint8_t, abort_mac_bytes> one_shot_mac(const abort_token& token,
                                                       const cluster_key& key) {
  constexpr std::string_view domain = "kvsim-abort-token-v3/link/issuer=decode/audience=prefill";
  std::vector<std::uint8_t> message(domain.begin(), domain.end());
  const auto append_le = [&message](auto value) {
    for (std::size_t i = 0; i < sizeof(value); ++i) {
      message.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    }
  };
  append_le(token.key.room);
  append_le(token.key.generation);
  append_le(token.issuer);
  append_le(token.audience);
  append_le(token.epoch);
  append_le(token.nonce);
  std::array<std::uint8_t, abort_mac_bytes> mac{};
  crypto_auth(mac.data(), message.data(), message.size(), key.bytes.data());
  return mac;
}

abort_token any_token_fields() {
  abort_token token;
  token.key = any_room_key();
  token.issuer = *rc::gen::arbitrary<rank_id>();
  token.audience = *rc::gen::arbitrary<rank_id>();
  token.epoch = *rc::gen::arbitrary<std::uint64_t>();
  token.nonce = *rc::gen::arbitrary<std::uint64_t>();
  return token;
}

RC_GTEST_PROP(AbortTokenProperty, ThePreparedKeyStateMacsAsOneShotCryptoAuthDoes, ()) {
  const cluster_key key = any_cluster_key();
  const token_mac prepared(key);
  // Many messages under one prepared state: the state is copied per message, never consumed.
  const auto messages = *rc::gen::inRange<int>(1, 8);
  for (int i = 0; i < messages; ++i) {
    abort_token token = any_token_fields();
    const auto expected = one_shot_mac(token, key);
    RC_ASSERT(prepared.sign(token) == expected);
    token.mac = expected;
    RC_ASSERT(prepared.verify(token));
    RC_ASSERT(token_mac(prepared).verify(token));  // a copy holds the same state
  }
}

RC_GTEST_PROP(AbortTokenProperty, IssuedTokensCarryTheOneShotMac, ()) {
  const cluster_key key = any_cluster_key();
  const abort_token token = any_genuine_token(key, any_room_key());
  // Made under the key of the link between its issuer and its audience.
  RC_ASSERT(token.mac == one_shot_mac(token, derive_link_key(key, token.issuer, token.audience)));
  RC_ASSERT(token.mac != one_shot_mac(token, key));
}

RC_GTEST_PROP(AbortTokenProperty, ThePreparedStateRefusesAnAlteredToken, ()) {
  const cluster_key key = any_cluster_key();
  const token_mac prepared(key);
  abort_token token = any_token_fields();
  token.mac = prepared.sign(token);
  abort_token altered = token;
  if (*rc::gen::arbitrary<bool>()) {
    altered.mac[*rc::gen::inRange<std::size_t>(0, abort_mac_bytes)] ^= any_nonzero<std::uint8_t>();
  } else {
    altered.nonce ^= any_nonzero<std::uint64_t>();
  }
  RC_ASSERT(prepared.verify(token));
  RC_ASSERT(!prepared.verify(altered));
  // Another cluster's prepared state refuses the genuine token.
  cluster_key other = key;
  other.bytes[*rc::gen::inRange<std::size_t>(0, abort_key_bytes)] ^= any_nonzero<std::uint8_t>();
  RC_ASSERT(!token_mac(other).verify(token));
}

// A known answer, pinned: the MAC of one fixed token under one fixed link key with the v3
// domain tag, as Python's hmac.new(key, tag + fields, sha512).digest()[:32] gives it
// (HMAC-SHA-512 truncated to 32 bytes).
TEST(TokenMac, KnownAnswer) {
  abort_token token{{42, 3}, 10, 0, 0x0123456789abcdefULL, 7, {}};
  const std::array<std::uint8_t, abort_mac_bytes> pinned = {
      0xcc, 0x32, 0x93, 0x62, 0xaf, 0xa0, 0x49, 0xd8,
      0x23, 0x04, 0xac, 0x41, 0x94, 0xbb, 0x8d, 0xf5,
      0x35, 0x6a, 0x93, 0x3f, 0x3b, 0x6c, 0x23, 0x03,
      0x9d, 0x1a, 0x0c, 0x24, 0xcb, 0x6a, 0x76, 0x65};
  EXPECT_EQ(one_shot_mac(token, our_cluster), pinned);
  EXPECT_EQ(token_mac(our_cluster).sign(token), pinned);
}

}  // namespace
}  // namespace kvsim::core::abort_token_test
