#pragma once
// Authenticated abort tokens. Decode issues one with each ABORT; prefill echoes it in its
// drain-ACK. The token binds (room, generation, issuer, nonce) under a keyed MAC (libsodium's
// crypto_auth, HMAC-SHA-512-256) so that a stale ACK for an older incarnation of a reused room
// (DOMAIN.md B11), a duplicated one, one from another cluster, or a forged one never touches
// the current (room, generation).
//
// Keys are per cluster and supplied by the caller: there is no global key and no global state
// here (libsodium's one-time initialisation is idempotent and thread-safe).
#include <array>
#include <cstdint>
#include <set>
#include <tuple>

#include "core/errors.h"
#include "core/ids.h"
#include "core/result.h"

namespace kvsim::core {

class event_sink;

inline constexpr std::size_t abort_key_bytes = 32;
inline constexpr std::size_t abort_mac_bytes = 32;

struct cluster_key {
  std::array<std::uint8_t, abort_key_bytes> bytes{};
};

struct abort_token {
  room_key key;
  rank_id issuer = 0;        // the decode rank that asked for the abort
  std::uint64_t nonce = 0;   // per issuer object: keep one issuer per rank for the whole run
  std::array<std::uint8_t, abort_mac_bytes> mac{};

  friend bool operator==(const abort_token&, const abort_token&) = default;
};

class abort_token_issuer {
 public:
  abort_token_issuer(rank_id issuer, const cluster_key& key, event_sink& sink);

  abort_token issue(room_key key);

 private:
  rank_id issuer_;
  cluster_key key_;
  event_sink& sink_;
  std::uint64_t next_nonce_ = 1;
};

class abort_token_verifier {
 public:
  abort_token_verifier(rank_id rank, const cluster_key& key, event_sink& sink);

  // Accepts a genuine token for exactly `expected`, once per presenting rank: the same token
  // echoed by two prefill ranks is two ACKs, the same token twice from one rank is a duplicate.
  // The token must come back to its issuer (an ACK echoing this rank's ABORT) or be presented
  // by its issuer (an ABORT from the decode rank that made it): when two decode ranks abort
  // the same room (DOMAIN.md B6), one rank's ACK can never satisfy the other.
  status<token_rejection> accept(const abort_token& token, room_key expected, rank_id presenter);
  // Drops the duplicate memory of a finished (room, generation).
  void forget(room_key key);
  std::uint32_t remembered() const { return static_cast<std::uint32_t>(seen_.size()); }

 private:
  using seen_entry = std::tuple<room_key, rank_id, std::uint64_t, rank_id>;

  rank_id rank_;
  cluster_key key_;
  event_sink& sink_;
  std::set<seen_entry> seen_;  // (key, issuer, nonce, presenter)
};

// The MAC check alone, without duplicate memory: true when `token` was made with `key`.
bool is_authentic(const abort_token& token, const cluster_key& key);

}  // namespace kvsim::core
