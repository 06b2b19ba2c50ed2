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

// Versioned domain tag: a MAC made for anything else under the same key never verifies here.
constexpr std::string_view mac_domain = "kvsim-abort-token-v1";

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
  append_le(message, token.nonce);
  return message;
}

}  // namespace

bool is_authentic(const abort_token& token, const cluster_key& key) {
  ensure_sodium();
  const std::vector<std::uint8_t> message = mac_message(token);
  return crypto_auth_verify(token.mac.data(), message.data(), message.size(),
                            key.bytes.data()) == 0;
}

abort_token_issuer::abort_token_issuer(rank_id issuer, const cluster_key& key, event_sink& sink)
    : issuer_(issuer), key_(key), sink_(sink) {
  ensure_sodium();
}

abort_token abort_token_issuer::issue(room_key key) {
  abort_token token{key, issuer_, next_nonce_++, {}};
  const std::vector<std::uint8_t> message = mac_message(token);
  crypto_auth(token.mac.data(), message.data(), message.size(), key_.bytes.data());
  sink_.emit(event{issuer_, token_issued{key, token.nonce}});
  return token;
}

abort_token_verifier::abort_token_verifier(rank_id rank, const cluster_key& key,
                                           event_sink& sink)
    : rank_(rank), key_(key), sink_(sink) {
  ensure_sodium();
}

status<token_rejection> abort_token_verifier::accept(const abort_token& token, room_key expected,
                                                     rank_id presenter) {
  std::optional<token_rejection> rejection;
  const seen_entry entry{token.key, token.issuer, token.nonce, presenter};
  if (!is_authentic(token, key_)) {
    rejection = token_rejection::forged;
  } else if (token.key.room != expected.room) {
    rejection = token_rejection::foreign_room;
  } else if (token.key.generation < expected.generation) {
    rejection = token_rejection::stale_generation;
  } else if (token.key.generation > expected.generation) {
    rejection = token_rejection::future_generation;
  } else if (token.issuer != rank_ && token.issuer != presenter) {
    rejection = token_rejection::foreign_issuer;
  } else if (seen_.contains(entry)) {
    rejection = token_rejection::duplicate;
  }
  if (rejection) {
    sink_.emit(event{rank_, token_rejected{expected, token.key, token.nonce, *rejection}});
    return *rejection;
  }
  seen_.insert(entry);
  sink_.emit(event{rank_, token_accepted{token.key, token.nonce, token.issuer, presenter}});
  return done{};
}

void abort_token_verifier::forget(room_key key) {
  std::erase_if(seen_, [&](const seen_entry& entry) { return std::get<0>(entry) == key; });
}

}  // namespace kvsim::core
