#pragma once
// Keys per link. Every secret that authenticates control traffic between a decode rank and a
// prefill rank is derived from the cluster key and the identities of both ranks (libsodium's
// crypto_kdf, BLAKE2b under a fixed context), so a MAC made for one link verifies on no other:
// a rank that holds the keys of its own links cannot mint a token or prove a message for a
// link it is not a party to, whatever `from` it claims. A rank is handed only the keys of its
// own links (link_keyring); the cluster key stays with whoever derives them (the launcher, a
// rank's start-up, the simulated world) and need not be kept after.
//
// Each link key is prepared twice, once per MAC domain: abort tokens (core/abort_token.h:
// decode issues, prefill echoes) and control-message proofs (core/message_proof.h: prefill's
// drain-ACKs, chunk_ready and status). The domains differ, so a token's MAC never passes for
// a message's proof or the reverse.
//
// Lives. A rank draws a life at every start (64 random bits, never zero; a decode rank's life
// is its issuer's epoch). A keyring built for the lives of both ends of each link binds every
// MAC of the link to those two lives: a token or a proof made before either end restarted
// verifies under no key of the lives that follow, so a capture from an earlier life (an ABORT
// recorded before prefill restarted, replayed to the same (room, generation) served again)
// is refused as forged, however empty the restarted rank's memories are. A rank learns its
// peers' lives where it learns the peers (a bootstrap service, a handshake); a keyring built
// without lives binds none and relies on its transport to keep lives apart.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/message_proof.h"
#include "core/token_mac.h"

namespace kvsim::core {

// The key of the link between ranks `a` and `b` (either order: a link has one key) under
// `cluster`. Deterministic: both ends derive the same key, and nobody without the cluster key
// can.
cluster_key derive_link_key(const cluster_key& cluster, rank_id a, rank_id b);

// A peer of a rank and the life it is in now.
struct peer_life {
  rank_id rank = 0;
  std::uint64_t life = 0;
};

// The key of the link between life `life_a` of rank `a` and life `life_b` of rank `b`: the
// link's key (derive_link_key) keyed over both lives in the order of their ranks (BLAKE2b),
// so both ends derive the same key and any other life of either end derives another.
// `a` and `b` differ: a link joins two ranks.
cluster_key derive_life_link_key(const cluster_key& cluster, rank_id a, std::uint64_t life_a,
                                 rank_id b, std::uint64_t life_b);

// One link's key, prepared for both MAC domains.
struct link_macs {
  explicit link_macs(const cluster_key& link_key) : tokens(link_key), messages(link_key) {}
  token_mac tokens;
  message_mac messages;
};

// The keys of one rank's links: the only secrets its issuer, verifier, sender and receiver
// hold. Built once per rank start; read-only afterwards (copies share nothing mutable).
class link_keyring {
 public:
  explicit link_keyring(rank_id self) : self_(self) {}
  // The keys of this rank's links to every rank of `peers`, derived from `cluster`.
  link_keyring(rank_id self, const cluster_key& cluster, const std::vector<rank_id>& peers);
  // The keys of life `self_life` of this rank's links to each peer in the life it is in
  // (derive_life_link_key); every life nonzero, as drawn.
  link_keyring(rank_id self, std::uint64_t self_life, const cluster_key& cluster,
               const std::vector<peer_life>& peers);

  // Adds (or replaces) the link to `peer` with a key prepared elsewhere: a process that starts
  // many ranks under one cluster key (a simulator starting a cluster per run) prepares each
  // link once, not per rank start.
  void add(rank_id peer, const link_macs& macs);
  // The link to `peer`; null when this rank holds no key for it (no MAC of that link can
  // verify here).
  const link_macs* find(rank_id peer) const;
  rank_id self() const { return self_; }
  std::size_t size() const { return links_.size(); }

 private:
  rank_id self_;
  std::map<rank_id, link_macs> links_;
};

// Where an issuer or a verifier finds its link keys: a keyring it was handed (a rank given only
// its own links), or the cluster key itself, from which it derives each link the first time it
// is asked for it (a rank trusted with the cluster key: tests, examples).
class link_source {
 public:
  explicit link_source(const link_keyring& ring) : ring_(&ring), derived_(ring.self()) {}
  link_source(rank_id self, const cluster_key& cluster) : cluster_(cluster), derived_(self) {}

  // The link between this rank and `peer`; null when it holds no key for it.
  const link_macs* find(rank_id peer);
  rank_id self() const { return derived_.self(); }

 private:
  const link_keyring* ring_ = nullptr;
  std::optional<cluster_key> cluster_;
  link_keyring derived_;
};

}  // namespace kvsim::core
