#include "core/abort_token.h"

#include <sodium.h>

#include <string_view>

#include "core/events.h"
#include "core/invariant.h"
#include "core/ports.h"

namespace kvsim::core {
namespace {

// Versioned domain tag, with the parties' roles: a MAC made for anything else under the same
// key (another message kind, a message proof, the v2 token made under the cluster key,
// reversed roles) never verifies here.
constexpr std::string_view mac_domain = "kvsim-abort-token-v3/link/issuer=decode/audience=prefill";

}  // namespace

std::array<std::uint8_t, token_fields_bytes> token_fields(const abort_token& token) {
  std::array<std::uint8_t, token_fields_bytes> fields{};
  std::size_t at = 0;
  at = put_le(fields, at, token.key.room);
  at = put_le(fields, at, token.key.generation);
  at = put_le(fields, at, token.issuer);
  at = put_le(fields, at, token.audience);
  at = put_le(fields, at, token.epoch);
  at = put_le(fields, at, token.nonce);
  KVSIM_INVARIANT(at == fields.size(), "the token's byte layout covers every field");
  return fields;
}

cluster_key::~cluster_key() { sodium_memzero(bytes.data(), bytes.size()); }

token_mac::token_mac(const cluster_key& link_key) : hmac_(link_key.bytes, mac_domain) {}

std::array<std::uint8_t, abort_mac_bytes> token_mac::sign(const abort_token& token) const {
  return hmac_.sign({token_fields(token)});
}

bool token_mac::verify(const abort_token& token) const {
  return hmac_.verify(token.mac, {token_fields(token)});
}

bool is_authentic(const abort_token& token, const cluster_key& cluster) {
  return token_mac(derive_link_key(cluster, token.issuer, token.audience)).verify(token);
}

abort_token_issuer::abort_token_issuer(rank_id issuer, const link_keyring& links,
                                       std::uint64_t epoch, event_sink& sink)
    : issuer_(issuer), links_(links), epoch_(epoch), sink_(sink) {
  KVSIM_INVARIANT(epoch != 0, "an abort token issuer needs an epoch drawn at its start");
  KVSIM_INVARIANT(links.self() == issuer, "an issuer signs with its own rank's links");
}

abort_token_issuer::abort_token_issuer(rank_id issuer, const cluster_key& cluster,
                                       std::uint64_t epoch, event_sink& sink)
    : issuer_(issuer), links_(issuer, cluster), epoch_(epoch), sink_(sink) {
  KVSIM_INVARIANT(epoch != 0, "an abort token issuer needs an epoch drawn at its start");
}

abort_token abort_token_issuer::issue(room_key key, rank_id audience) {
  const link_macs* link = links_.find(audience);
  KVSIM_INVARIANT(link != nullptr, "an ABORT goes only to a rank this rank holds a link key for");
  abort_token token{key, issuer_, audience, epoch_, next_nonce_++, {}};
  token.mac = link->tokens.sign(token);
  sink_.emit_built(event{issuer_, token_issued{key, token.nonce, audience}});
  return token;
}

abort_token_verifier::abort_token_verifier(rank_id rank, const link_keyring& links,
                                           event_sink& sink, std::uint32_t remembered_max)
    : rank_(rank), links_(links), sink_(sink), seen_order_(remembered_max), retired_(remembered_max) {
  KVSIM_INVARIANT(links.self() == rank, "a verifier checks with its own rank's links");
}

abort_token_verifier::abort_token_verifier(rank_id rank, const cluster_key& cluster,
                                           event_sink& sink, std::uint32_t remembered_max)
    : rank_(rank),
      links_(rank, cluster),
      sink_(sink),
      seen_order_(remembered_max),
      retired_(remembered_max) {}

status<token_rejection> abort_token_verifier::accept_abort(const abort_token& token,
                                                           room_key expected, rank_id presenter,
                                                           bool presenter_is_party) {
  // An ABORT: from the token's issuer to its audience, this prefill rank.
  return accept(token, expected, presenter, token.audience == rank_ && presenter == token.issuer,
                presented{presenter_is_party, nullptr, nullptr});
}

status<token_rejection> abort_token_verifier::accept_ack(const control_message& message,
                                                         room_key expected,
                                                         bool presenter_is_party,
                                                         const abort_token* issued) {
  KVSIM_INVARIANT(message.token.has_value(), "a drain-ACK is checked by the token it carries");
  const abort_token& token = *message.token;
  // A drain-ACK: from the token's audience back to its issuer, this decode rank.
  return accept(token, expected, message.from,
                token.issuer == rank_ && message.from == token.audience,
                presented{presenter_is_party, &message, issued});
}

bool abort_token_verifier::proven(const control_message& message) {
  const link_macs* link = links_.find(message.from);
  return link != nullptr && link->messages.verify(message, rank_);
}

void abort_token_verifier::prove(control_message& message, rank_id to) {
  const link_macs* link = links_.find(to);
  KVSIM_INVARIANT(link != nullptr, "a rank proves messages only on links it holds a key for");
  message.proof = link->messages.sign(message, to);
}

status<token_rejection> abort_token_verifier::accept(const abort_token& token, room_key expected,
                                                     rank_id presenter, bool between_parties,
                                                     presented what) {
  std::optional<token_rejection> rejection;
  const seen_entry entry{token.issuer, token.epoch, token.nonce, presenter};
  // The token verifies only under the key of the link it names; a rank holding no key of that
  // link cannot tell it from noise. The one MAC check of this message on its way through the
  // core (on_abort and on_ack each call accept once per message); the cheaper field checks
  // come after it so that a forged token is always refused as forged, whatever it claims.
  // A rank holds the keys of its own links only: a token between two other ranks cannot be
  // told from a forgery here, and is refused as one.
  const link_macs* link = token.issuer == rank_     ? links_.find(token.audience)
                          : token.audience == rank_ ? links_.find(token.issuer)
                                                    : nullptr;
  if (link == nullptr || !link->tokens.verify(token)) {
    rejection = token_rejection::forged;
  } else if (token.key.room != expected.room) {
    rejection = token_rejection::foreign_room;
  } else if (token.key.generation < expected.generation) {
    rejection = token_rejection::stale_generation;
  } else if (token.key.generation > expected.generation) {
    rejection = token_rejection::future_generation;
  } else if (!between_parties) {
    rejection = token_rejection::foreign_issuer;
  } else if (retired_.contains(token.key)) {
    rejection = token_rejection::retired;
  } else if (what.proof_of != nullptr && !link->messages.verify(*what.proof_of, rank_)) {
    // Checked before the duplicate memory takes it: an echo without proof must not use up the
    // place of the genuine ACK that follows.
    rejection = token_rejection::unproven;
  } else if (!what.party) {
    rejection = token_rejection::not_a_party;
  } else if (what.proof_of != nullptr && (what.issued == nullptr || *what.issued != token)) {
    // Genuine and proven, but not what this life of this rank asked that peer to echo.
    rejection = token_rejection::not_issued;
  } else if (const auto it = seen_.find(token.key); it != seen_.end() && it->second.contains(entry)) {
    rejection = token_rejection::duplicate;
  }
  if (rejection) {
    refuse(expected, token.key, token.nonce, *rejection);
    return *rejection;
  }
  if (const auto oldest = seen_order_.insert(token.key)) seen_.erase(*oldest);
  seen_[token.key].insert(entry);
  sink_.emit_built(event{rank_, token_accepted{token.key, token.nonce, token.issuer, presenter,
                                               token.audience}});
  return done{};
}

void abort_token_verifier::refuse(room_key expected, room_key token_key, std::uint64_t nonce,
                                  token_rejection why) {
  sink_.emit_built(event{rank_, token_rejected{expected, token_key, nonce, why}});
}

void abort_token_verifier::forget(room_key key) {
  seen_.erase(key);
  (void)seen_order_.erase(key);
  (void)retired_.insert(key);
}

std::uint32_t abort_token_verifier::remembered() const {
  std::size_t entries = 0;
  for (const auto& [key, seen] : seen_) entries += seen.size();
  return static_cast<std::uint32_t>(entries);
}

std::uint32_t abort_token_verifier::remembered(room_key key) const {
  const auto it = seen_.find(key);
  return it == seen_.end() ? 0 : static_cast<std::uint32_t>(it->second.size());
}

}  // namespace kvsim::core
