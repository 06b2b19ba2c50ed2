#pragma once
// The abort token and its MAC. Decode issues one token per prefill rank with each ABORT; that
// prefill rank echoes it in its drain-ACK. The token binds (room, generation, issuer, audience,
// epoch, nonce) under a keyed MAC (libsodium's crypto_auth, HMAC-SHA-512-256) made with the key
// of the link between issuer and audience (core/link_keys.h), with the parties' roles fixed by
// the MAC's domain tag (issuer: a decode rank; audience: a prefill rank).
#include <array>
#include <cstdint>

#include "core/ids.h"
#include "core/prepared_hmac.h"

namespace kvsim::core {

inline constexpr std::size_t abort_key_bytes = hmac_key_bytes;
inline constexpr std::size_t abort_mac_bytes = hmac_bytes;

// A secret key: a cluster's, or one link's derived from it (core/link_keys.h). Wiped when
// destroyed; draw a cluster key from a CSPRNG, never from a constant.
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

// A token's fields in the one byte order every MAC over a token reads them (the token's own
// MAC, and a message proof that covers the token it carries): room, generation, issuer,
// audience, epoch, nonce, little-endian.
inline constexpr std::size_t token_fields_bytes =
    sizeof(abort_token::key.room) + sizeof(abort_token::key.generation) +
    sizeof(abort_token::issuer) + sizeof(abort_token::audience) + sizeof(abort_token::epoch) +
    sizeof(abort_token::nonce);
std::array<std::uint8_t, token_fields_bytes> token_fields(const abort_token& token);

// The MAC of abort tokens under one link key (prepared_hmac: keyed once, wiped with it).
class token_mac {
 public:
  explicit token_mac(const cluster_key& link_key);

  std::array<std::uint8_t, abort_mac_bytes> sign(const abort_token& token) const;
  // True when `token.mac` is this key's MAC of the token; compared in constant time.
  bool verify(const abort_token& token) const;

 private:
  prepared_hmac hmac_;
};

// The MAC check alone, without duplicate memory: true when `token` was made under `cluster`'s
// key for the link between its issuer and its audience. It derives and prepares that link's
// key for this one call; code that checks many tokens holds a link_keyring.
bool is_authentic(const abort_token& token, const cluster_key& cluster);

}  // namespace kvsim::core
