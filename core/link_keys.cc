#include "core/link_keys.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "core/invariant.h"

namespace kvsim::core {
namespace {

static_assert(abort_key_bytes == crypto_kdf_KEYBYTES);
static_assert(abort_key_bytes >= crypto_kdf_BYTES_MIN && abort_key_bytes <= crypto_kdf_BYTES_MAX);
static_assert(abort_key_bytes >= crypto_generichash_BYTES_MIN &&
              abort_key_bytes <= crypto_generichash_BYTES_MAX &&
              abort_key_bytes >= crypto_generichash_KEYBYTES_MIN &&
              abort_key_bytes <= crypto_generichash_KEYBYTES_MAX);
// crypto_kdf's context: exactly crypto_kdf_CONTEXTBYTES characters, fixed per purpose.
constexpr char link_context[crypto_kdf_CONTEXTBYTES + 1] = "kvsmlnk1";
// What a life-bound link key hashes besides the two lives: a versioned tag of its own, so the
// hash means this and nothing else under the link's key.
constexpr std::string_view lives_tag = "kvsim-link-lives-v1";

}  // namespace

cluster_key derive_link_key(const cluster_key& cluster, rank_id a, rank_id b) {
  KVSIM_INVARIANT(sodium_init() >= 0, "libsodium failed to initialise");
  // The link's identity is the unordered pair: the lower rank in the high half, so that both
  // ends name the same subkey and no two pairs share one.
  const std::uint64_t subkey_id =
      (static_cast<std::uint64_t>(std::min(a, b)) << 32) | std::max(a, b);
  cluster_key link;
  KVSIM_INVARIANT(crypto_kdf_derive_from_key(link.bytes.data(), link.bytes.size(), subkey_id,
                                             link_context, cluster.bytes.data()) == 0,
                  "a link key is derived from a well-formed cluster key");
  return link;
}

cluster_key derive_life_link_key(const cluster_key& cluster, rank_id a, std::uint64_t life_a,
                                 rank_id b, std::uint64_t life_b) {
  KVSIM_INVARIANT(life_a != 0 && life_b != 0, "a life is drawn at a rank's start, never zero");
  KVSIM_INVARIANT(a != b, "a link joins two ranks: a rank holds no key to itself");
  const cluster_key link = derive_link_key(cluster, a, b);
  // The lower rank's life first, so that both ends hash the same bytes.
  const std::uint64_t lives[2] = {a < b ? life_a : life_b, a < b ? life_b : life_a};
  std::array<std::uint8_t, lives_tag.size() + sizeof lives> input{};
  std::size_t at = 0;
  for (const char c : lives_tag) input[at++] = static_cast<std::uint8_t>(c);
  for (const std::uint64_t life : lives) at = put_le(input, at, life);
  KVSIM_INVARIANT(at == input.size(), "the lives' byte layout covers every byte");
  cluster_key bound;
  KVSIM_INVARIANT(crypto_generichash(bound.bytes.data(), bound.bytes.size(), input.data(),
                                     input.size(), link.bytes.data(), link.bytes.size()) == 0,
                  "a life-bound link key is hashed under a well-formed link key");
  return bound;
}

link_keyring::link_keyring(rank_id self, std::uint64_t self_life, const cluster_key& cluster,
                           const std::vector<peer_life>& peers)
    : self_(self) {
  for (const peer_life& peer : peers) {
    add(peer.rank, link_macs(derive_life_link_key(cluster, self, self_life, peer.rank, peer.life)));
  }
}

link_keyring::link_keyring(rank_id self, const cluster_key& cluster,
                           const std::vector<rank_id>& peers)
    : self_(self) {
  for (rank_id peer : peers) add(peer, link_macs(derive_link_key(cluster, self, peer)));
}

void link_keyring::add(rank_id peer, const link_macs& macs) { links_.insert_or_assign(peer, macs); }

const link_macs* link_keyring::find(rank_id peer) const {
  const auto it = links_.find(peer);
  return it == links_.end() ? nullptr : &it->second;
}

const link_macs* link_source::find(rank_id peer) {
  if (ring_ != nullptr) return ring_->find(peer);
  if (const link_macs* known = derived_.find(peer)) return known;
  derived_.add(peer, link_macs(derive_link_key(*cluster_, derived_.self(), peer)));
  return derived_.find(peer);
}

}  // namespace kvsim::core
