#include "core/link_keys.h"

#include <sodium.h>

#include <algorithm>
#include <cstdint>

#include "core/invariant.h"

namespace kvsim::core {
namespace {

static_assert(abort_key_bytes == crypto_kdf_KEYBYTES);
static_assert(abort_key_bytes >= crypto_kdf_BYTES_MIN && abort_key_bytes <= crypto_kdf_BYTES_MAX);
// crypto_kdf's context: exactly crypto_kdf_CONTEXTBYTES characters, fixed per purpose.
constexpr char link_context[crypto_kdf_CONTEXTBYTES + 1] = "kvsmlnk1";

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
