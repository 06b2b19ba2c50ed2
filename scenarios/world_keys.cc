#include "scenarios/world_keys.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace kvsim::scenarios {

using core::rank_id;

namespace {

core::cluster_key world_key() {
  core::cluster_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) key.bytes[i] = static_cast<std::uint8_t>(0x5a ^ i);
  return key;
}

}  // namespace

std::uint64_t rank_life(rank_id rank) { return 0x6b7673696d000000ULL + rank + 1; }

namespace {

// The life a rank was in before it restarted: differs from every life of this run (those count
// up from a fixed base; this flips the top bit).
std::uint64_t earlier_life(rank_id rank) { return rank_life(rank) ^ (1ULL << 63); }

// Every world of the process shares one cluster key, so each link's key is derived and its
// HMAC states prepared once per thread (a constant, like the key: nothing of a run reaches it).
// Keying HMAC per rank per run was 4% of a page42 search. The insider (an adversary) looks
// up any link here, and a link as it was before one of its ends restarted; the ranks' own
// keyrings are built below as the real backend builds them.
// Under per_pair keying the key of a link is the pair's alone (`restarted` is then unused: no
// recording crosses a connection).
const core::link_macs& world_link_of_lives(link_keying keying, rank_id a, rank_id b,
                                           std::optional<rank_id> restarted) {
  thread_local std::map<std::tuple<link_keying, rank_id, rank_id, std::optional<rank_id>>,
                        core::link_macs>
      prepared;
  const auto key = std::tuple{keying, std::min(a, b), std::max(a, b), restarted};
  auto it = prepared.find(key);
  if (it == prepared.end()) {
    const auto life = [&](rank_id r) { return r == restarted ? earlier_life(r) : rank_life(r); };
    const core::cluster_key link =
        keying == link_keying::per_pair
            ? core::derive_link_key(world_key(), a, b)
            : core::derive_life_link_key(world_key(), a, life(a), b, life(b));
    it = prepared.emplace(key, core::link_macs(link)).first;
  }
  return it->second;
}

}  // namespace

const core::link_macs& world_link(link_keying keying, rank_id a, rank_id b) {
  return world_link_of_lives(keying, a, b, std::nullopt);
}
const core::link_macs& world_link_before_restart(rank_id a, rank_id restarted) {
  return world_link_of_lives(link_keying::per_life, a, restarted, restarted);
}

// The keys rank `self` holds: its links to every rank in `peers`, and no other, each bound to
// the lives of both ends (per_life) or to the pair alone (per_pair). Built by the core's own
// keyring constructors from the cluster key (as a real rank's start-up builds it), once per
// thread for each (keying, rank, peers), and copied per run.
core::link_keyring world_keyring(link_keying keying, rank_id self, const std::vector<rank_id>& peers) {
  thread_local std::map<std::tuple<link_keying, rank_id, std::vector<rank_id>>, core::link_keyring> built;
  auto it = built.find({keying, self, peers});
  if (it == built.end()) {
    std::vector<core::peer_life> lives;
    for (rank_id peer : peers) lives.push_back({peer, rank_life(peer)});
    const core::link_keyring ring = keying == link_keying::per_pair
                                        ? core::link_keyring(self, world_key(), peers)
                                        : core::link_keyring(self, rank_life(self), world_key(), lives);
    it = built.emplace(std::tuple{keying, self, peers}, ring).first;
  }
  return it->second;
}

}  // namespace kvsim::scenarios
