#pragma once
// A catalogue prefetch scenario (the seed's HiCache cases) on a real data plane: one host
// thread per rank of the attention group builds the production prefetch_abort_coordinator
// with the chosen variant, binds it to itself (core/owner_thread.h: no other thread may call
// it) and runs it exactly as the simulator's prefetch_world schedules it (register, start the
// storage read, then release the aborted request or complete it). The ranks meet only in the
// group's collectives. An active
// rank's storage read is really in flight: a gate holds its copies into the rank's host
// pages until the rank waits for the read (its first poll: the drain). The group's
// collectives run through rank_group (NCCL across devices, or host-combined values through a
// one-rank communicator when the ranks share a device).
//
// Checks: I5 from the group (a rank waits in a collective that a peer entered differently
// or returned without), I6 from the host page ledgers (a host page freed twice, or freed
// while its storage read is still in flight: H2), and I7 on the host pages' bytes once the
// reads have landed.
#include <cstdint>
#include <map>

#include "core/variant.h"
#include "real_backend/data_plane.h"
#include "real_backend/scripts/real_outcome.h"
#include "real_backend/scripts/transfer_script.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

struct prefetch_counts {
  std::map<core::rank_id, std::uint32_t> barrier_entries;
  std::map<core::rank_id, std::uint32_t> host_page_frees;  // host_pages_freed decisions
};

real_outcome run_prefetch_script(const scenarios::scenario_spec& spec, core::variant v,
                                 const std::string& variant_name, data_plane& plane,
                                 const script_options& options = {},
                                 prefetch_counts* counts = nullptr);

}  // namespace kvsim::real
