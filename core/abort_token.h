#pragma once
// Authenticated abort tokens. Decode issues one per prefill rank with each ABORT; that prefill
// rank echoes it in its drain-ACK. The token binds (room, generation, issuer, audience,
// epoch, nonce) under a keyed MAC (libsodium's crypto_auth, HMAC-SHA-512-256), with the
// parties' roles fixed by the MAC's domain tag (issuer: a decode rank; audience: a prefill
// rank), so that a stale ACK for an older incarnation of a reused room (DOMAIN.md B11), a
// duplicated one, one from another cluster, a forged one, or one prefill peer presenting
// another peer's token never touches the current (room, generation).
//
// Nonces never repeat under one key: each issuer is built with an epoch the caller draws at
// start (real_backend: 64 random bits from libsodium; the simulator: from its seed), and
// counts nonces within it, so a restarted rank mints tokens no earlier capture matches.
//
// Keys are per cluster and supplied by the caller: there is no global key and no global state
// here (libsodium's one-time initialisation is idempotent and thread-safe, and done once per
// key, not per message). Every copy of a key, or of the MAC state prepared from it, that the
// core holds is wiped (sodium_memzero) when it is destroyed.
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "core/bounded_key_set.h"
#include "core/errors.h"
#include "core/ids.h"
#include "core/result.h"

namespace kvsim::core {

class event_sink;

inline constexpr std::size_t abort_key_bytes = 32;
inline constexpr std::size_t abort_mac_bytes = 32;

// A cluster's MAC key. Wiped when destroyed; draw it from a CSPRNG, never from a constant.
struct cluster_key {
  std::array<std::uint8_t, abort_key_bytes> bytes{};

  cluster_key() = default;
  cluster_key(const cluster_key&) = default;
  cluster_key& operator=(const cluster_key&) = default;
  ~cluster_key();
};

struct abort_token {
  room_key key;
  rank_id issuer = 0;       // the decode rank that asked for the abort
  rank_id audience = 0;     // the prefill rank it is for: the only one that may echo it
  std::uint64_t epoch = 0;  // the issuer's epoch, drawn at its start
  std::uint64_t nonce = 0;  // counts within the epoch
  std::array<std::uint8_t, abort_mac_bytes> mac{};

  friend bool operator==(const abort_token&, const abort_token&) = default;
};

// The MAC of abort tokens under one cluster key, with HMAC-SHA-512-256's key state (the
// inner and outer hashes keyed, and the domain tag absorbed) prepared once per key: each
// message then costs a copy of that state and two SHA-512 blocks, instead of a key schedule
// and four. The MACs are byte for byte those of crypto_auth over the same message. The
// prepared state is as secret as the key and is wiped with it.
class token_mac {
 public:
  explicit token_mac(const cluster_key& key);
  token_mac(const token_mac&) = default;
  token_mac& operator=(const token_mac&) = default;
  ~token_mac();

  std::array<std::uint8_t, abort_mac_bytes> sign(const abort_token& token) const;
  // True when `token.mac` is this key's MAC of the token; compared in constant time.
  bool verify(const abort_token& token) const;

  // libsodium's crypto_auth_hmacsha512256_state, held as bytes so that this header does not
  // need <sodium.h> (an installed consumer links libsodium but need not see its headers);
  // abort_token.cc checks the size.
  static constexpr std::size_t state_bytes = 416;

 private:
  alignas(8) std::array<std::uint8_t, state_bytes> prepared_{};
};

class abort_token_issuer {
 public:
  // `epoch` must differ between any two starts of any issuer under `key` (draw it at random);
  // zero is refused as the sign of a caller that did not draw one.
  abort_token_issuer(rank_id issuer, const cluster_key& key, std::uint64_t epoch,
                     event_sink& sink);
  // The same with the key already prepared: a process that starts many issuers and verifiers
  // under one key (a simulator starting a cluster per run) keys HMAC once, not per object.
  abort_token_issuer(rank_id issuer, const token_mac& mac, std::uint64_t epoch,
                     event_sink& sink);

  // A token for the ABORT of `key` sent to prefill rank `audience`.
  abort_token issue(room_key key, rank_id audience);

 private:
  rank_id issuer_;
  token_mac mac_;
  std::uint64_t epoch_;
  event_sink& sink_;
  std::uint64_t next_nonce_ = 1;
};

class abort_token_verifier {
 public:
  // `remembered_max` bounds both memories: the (room, generation)s with accepted tokens (the
  // oldest's memory goes when full) and the forgotten ones that keep being refused.
  abort_token_verifier(rank_id rank, const cluster_key& key, event_sink& sink,
                       std::uint32_t remembered_max = 4096);
  // The same with the key already prepared (see abort_token_issuer).
  abort_token_verifier(rank_id rank, const token_mac& mac, event_sink& sink,
                       std::uint32_t remembered_max = 4096);

  // Accepts a genuine token for exactly `expected` that passes between its two parties, in
  // the role the caller holds, once per presenter: on a prefill rank an ABORT, presented by
  // the token's issuer to its audience (this rank); on a decode rank a drain-ACK, presented by
  // the token's audience back to its issuer (this rank). A token is good in one direction
  // only: a decode rank never takes an ABORT's token for an ACK, nor the reverse.
  status<token_rejection> accept_abort(const abort_token& token, room_key expected,
                                       rank_id presenter);
  status<token_rejection> accept_ack(const abort_token& token, room_key expected,
                                     rank_id presenter);
  // The (room, generation) is over on this rank: its duplicate memory goes, and every token
  // of it is refused from now on (token_rejection::retired), so a token captured earlier
  // cannot be replayed. The refusal is remembered for the last `remembered_max` keys; what
  // is older is covered by the callers' own lifetimes (decode drops an ACK for a request it
  // no longer has before asking; prefill answers an authentic ABORT of a room that is over
  // with a drain-ACK and changes nothing).
  void forget(room_key key);
  std::uint32_t remembered() const;  // duplicate-memory entries held

 private:
  using seen_entry = std::tuple<rank_id, std::uint64_t, std::uint64_t, rank_id>;

  status<token_rejection> accept(const abort_token& token, room_key expected, rank_id presenter,
                                 bool between_parties);

  rank_id rank_;
  token_mac mac_;
  event_sink& sink_;
  // Per (room, generation): (issuer, epoch, nonce, presenter) of every accepted token.
  std::map<room_key, std::set<seen_entry>> seen_;
  bounded_key_set seen_order_;
  bounded_key_set retired_;
};

// The MAC check alone, without duplicate memory: true when `token` was made with `key`. It
// prepares the key for this one call; code that checks many tokens holds a token_mac.
bool is_authentic(const abort_token& token, const cluster_key& key);

}  // namespace kvsim::core
