#include "core/abort_token.h"

#include <sodium.h>

#include <cstring>
#include <string_view>

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

static_assert(sizeof(crypto_auth_hmacsha512256_state) == token_mac::state_bytes);
static_assert(alignof(crypto_auth_hmacsha512256_state) <= 8);

// The token's fields after the domain tag, little-endian, in a fixed order: room, generation,
// issuer, audience, epoch, nonce.
constexpr std::size_t mac_fields_bytes =
    sizeof(abort_token::key.room) + sizeof(abort_token::key.generation) +
    sizeof(abort_token::issuer) + sizeof(abort_token::audience) + sizeof(abort_token::epoch) +
    sizeof(abort_token::nonce);
using mac_fields = std::array<std::uint8_t, mac_fields_bytes>;

template <class T>
std::size_t put_le(mac_fields& out, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  return at + sizeof(T);
}

mac_fields mac_message_fields(const abort_token& token) {
  mac_fields fields{};
  std::size_t at = 0;
  at = put_le(fields, at, token.key.room);
  at = put_le(fields, at, token.key.generation);
  at = put_le(fields, at, token.issuer);
  at = put_le(fields, at, token.audience);
  at = put_le(fields, at, token.epoch);
  at = put_le(fields, at, token.nonce);
  KVSIM_INVARIANT(at == fields.size(), "the MAC message layout covers every token field");
  return fields;
}

}  // namespace

cluster_key::~cluster_key() { sodium_memzero(bytes.data(), bytes.size()); }

token_mac::token_mac(const cluster_key& key) {
  ensure_sodium();
  // Key the inner and outer hashes and absorb the constant domain tag once; every message
  // continues from a copy of this state.
  crypto_auth_hmacsha512256_state state;
  crypto_auth_hmacsha512256_init(&state, key.bytes.data(), key.bytes.size());
  crypto_auth_hmacsha512256_update(
      &state, reinterpret_cast<const unsigned char*>(mac_domain.data()), mac_domain.size());
  std::memcpy(prepared_.data(), &state, sizeof state);
  sodium_memzero(&state, sizeof state);
}

token_mac::~token_mac() { sodium_memzero(prepared_.data(), prepared_.size()); }

std::array<std::uint8_t, abort_mac_bytes> token_mac::sign(const abort_token& token) const {
  const mac_fields fields = mac_message_fields(token);
  crypto_auth_hmacsha512256_state state;
  std::memcpy(&state, prepared_.data(), sizeof state);
  crypto_auth_hmacsha512256_update(&state, fields.data(), fields.size());
  std::array<std::uint8_t, abort_mac_bytes> mac{};
  crypto_auth_hmacsha512256_final(&state, mac.data());  // final wipes the state copy
  return mac;
}

bool token_mac::verify(const abort_token& token) const {
  const std::array<std::uint8_t, abort_mac_bytes> expected = sign(token);
  return crypto_verify_32(token.mac.data(), expected.data()) == 0;
}

bool is_authentic(const abort_token& token, const cluster_key& key) {
  return token_mac(key).verify(token);
}

abort_token_issuer::abort_token_issuer(rank_id issuer, const cluster_key& key,
                                       std::uint64_t epoch, event_sink& sink)
    : abort_token_issuer(issuer, token_mac(key), epoch, sink) {}

abort_token_issuer::abort_token_issuer(rank_id issuer, const token_mac& mac, std::uint64_t epoch,
                                       event_sink& sink)
    : issuer_(issuer), mac_(mac), epoch_(epoch), sink_(sink) {
  KVSIM_INVARIANT(epoch != 0, "an abort token issuer needs an epoch drawn at its start");
}

abort_token abort_token_issuer::issue(room_key key, rank_id audience) {
  abort_token token{key, issuer_, audience, epoch_, next_nonce_++, {}};
  token.mac = mac_.sign(token);
  sink_.emit_built(event{issuer_, token_issued{key, token.nonce, audience}});
  return token;
}

abort_token_verifier::abort_token_verifier(rank_id rank, const cluster_key& key,
                                           event_sink& sink, std::uint32_t remembered_max)
    : abort_token_verifier(rank, token_mac(key), sink, remembered_max) {}

abort_token_verifier::abort_token_verifier(rank_id rank, const token_mac& mac, event_sink& sink,
                                           std::uint32_t remembered_max)
    : rank_(rank), mac_(mac), sink_(sink), seen_order_(remembered_max), retired_(remembered_max) {}

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
  // The one MAC check of this message on its way through the core (on_abort and on_ack each
  // call accept once per message); the cheaper field checks come after it so that a forged
  // token is always refused as forged, whatever it claims.
  if (!mac_.verify(token)) {
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
    sink_.emit_built(event{rank_, token_rejected{expected, token.key, token.nonce, *rejection}});
    return *rejection;
  }
  if (const auto oldest = seen_order_.insert(token.key)) seen_.erase(*oldest);
  seen_[token.key].insert(entry);
  sink_.emit_built(event{rank_, token_accepted{token.key, token.nonce, token.issuer, presenter,
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
