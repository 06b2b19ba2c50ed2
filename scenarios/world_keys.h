#pragma once
// The keys of a simulated transfer world: every rank's life (the epoch a real rank draws at
// start), the key of each link, and each rank's keyring, built by the core's own keyring
// constructors from one cluster key as a real rank's start-up builds them. Constants of the
// process: nothing of a run reaches them, so each is prepared once per thread and shared.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/link_keys.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

// Each rank's life: a real rank draws it at random at every start (a decode rank's is its
// issuer's epoch); the simulated ranks start once per run, so any distinct nonzero value per
// rank is such a draw. Every rank knows every peer's life, as a bootstrap service tells it.
std::uint64_t rank_life(core::rank_id rank);

// The MAC states of the link between `a` and `b`, as both ends hold it.
const core::link_macs& world_link(link_keying keying, core::rank_id a, core::rank_id b);
// The same link as it was before `restarted` (one of its ends) restarted: what the insider
// recorded in that earlier life (per_life keying only).
const core::link_macs& world_link_before_restart(core::rank_id a, core::rank_id restarted);

// The keys rank `self` holds: its links to every rank in `peers`, and no other.
core::link_keyring world_keyring(link_keying keying, core::rank_id self,
                                 const std::vector<core::rank_id>& peers);

}  // namespace kvsim::scenarios
