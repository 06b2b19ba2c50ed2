#pragma once
// A simulated transfer's id, unique in a world, and the actor that runs it. The id packs the
// source rank into the high 32 bits and the rank's engine handle into the low ones, so the
// raw number (4294967299 is rank 1, handle 3) means nothing to a reader: whatever prints a
// transfer for people names it by its executor instead, "r1.transfer.3".
#include <cstdint>

#include "core/ids.h"
#include "core/ports.h"
#include "sim/actor_name.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

inline transfer_id make_transfer_id(core::rank_id source_rank, core::transfer_handle handle) {
  return (std::uint64_t{source_rank} << 32) | handle;
}

// The executor sim_transfer_engine spawns for the transfer: (source rank, "transfer", handle).
inline actor_name transfer_actor(transfer_id id) {
  return actor_name{static_cast<core::rank_id>(id >> 32), "transfer",
                    static_cast<std::uint32_t>(id & 0xffffffffu)};
}

}  // namespace kvsim::sim
