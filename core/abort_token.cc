#include "core/abort_token.h"

#include <sodium.h>

#include <string_view>
#include <vector>

#include "core/events.h"
#include "core/invariant.h"
#include "core/ports.h"

namespace kvsim::core {
namespace {

static_assert(abort_key_bytes == crypto_auth_KEYBYTES);
static_assert(abort_mac_bytes == crypto_auth_BYTES);

// Versioned domain tag, with the parties' roles: a MAC made for anything else under the same
// key (another message kind, the v1 token without audience and epoch, reversed roles) never
// verifies here.
constexpr std::string_view mac_domain = "kvsim-abort-token-v2/issuer=decode/audience=prefill";

void ensure_sodium() {
  // sodium_init is idempotent (returns 1 when already done); -1 means no usable RNG/CPU
  // features, and then tokens cannot be trusted: fail closed.
  KVSIM_INVARIANT(sodium_init() >= 0, "libsodium failed to initialise");
}

template <class T>
void append_le(std::vector<std::uint8_t>& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

std::vector<std::uint8_t> mac_message(const abort_token& token) {
  std::vector<std::uint8_t> message(mac_domain.begin(), mac_domain.end());
  append_le(message, token.key.room);
  append_le(message, token.key.generation);
  append_le(message, token.issuer);
  append_le(message, token.audience);
  append_le(message, token.epoch);
  append_le(message, token.nonce);
  return message;
}

}  // namespace

cluster_key::~cluster_key() { sodium_memzero(bytes.data(), bytes.size()); }

bool is_authentic(const abort_token& token, const cluster_key& key) {
  ensure_sodium();
  const std::vector<std::uint8_t> message = mac_message(token);
  return crypto_auth_verify(token.mac.data(), message.data(), message.size(),
                            key.bytes.data()) == 0;
}

abort_token_issuer::abort_token_issuer(rank_id issuer, const cluster_key& key,
                                       std::uint64_t epoch, event_sink& sink)
    : issuer_(issuer), key_(key), epoch_(epoch), sink_(sink) {
  ensure_sodium();
  KVSIM_INVARIANT(epoch != 0, "an abort token issuer needs an epoch drawn at its start");
}

abort_token abort_token_issuer::issue(room_key key, rank_id audience) {
  abort_token token{key, issuer_, audience, epoch_, next_nonce_++, {}};
  const std::vector<std::uint8_t> message = mac_message(token);
  crypto_auth(token.mac.data(), message.data(), message.size(), key_.bytes.data());
  sink_.emit(event{issuer_, token_issued{key, token.nonce, audience}});
  return token;
}

abort_token_verifier::abort_token_verifier(rank_id rank, const cluster_key& key,
                                           event_sink& sink, std::uint32_t remembered_max)
    : rank_(rank), key_(key), sink_(sink), seen_order_(remembered_max), retired_(remembered_max) {
  ensure_sodium();
}

status<token_rejection> abort_token_verifier::accept_abort(const abort_token& token,
                                                           room_key expected, rank_id presenter) {
  // An ABORT: from the token's issuer to its audience, this prefill rank.
  return accept(token, expected, presenter, token.audience == rank_ && presenter == token.issuer);
}

status<token_rejection> abort_token_verifier::accept_ack(const abort_token& token,
                                                         room_key expected, rank_id presenter) {
  // A drain-ACK: from the token's audience back to its issuer, this decode rank.
  return accept(token, expected, presenter, token.issuer == rank_ && presenter == token.audience);
}

status<token_rejection> abort_token_verifier::accept(const abort_token& token, room_key expected,
                                                     rank_id presenter, bool between_parties) {
  std::optional<token_rejection> rejection;
  const seen_entry entry{token.issuer, token.epoch, token.nonce, presenter};
  if (!is_authentic(token, key_)) {
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
  } else if (const auto it = seen_.find(token.key); it != seen_.end() && it->second.contains(entry)) {
    rejection = token_rejection::duplicate;
  }
  if (rejection) {
    sink_.emit(event{rank_, token_rejected{expected, token.key, token.nonce, *rejection}});
    return *rejection;
  }
  if (const auto oldest = seen_order_.insert(token.key)) seen_.erase(*oldest);
  seen_[token.key].insert(entry);
  sink_.emit(event{rank_, token_accepted{token.key, token.nonce, token.issuer, presenter,
                                         token.audience}});
  return done{};
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

}  // namespace kvsim::core
