#pragma once
// The careless caller's wrong calls on a prefill rank's room table (the fault `misuse`, next
// to its ledger calls in careless_call.h): which room makes a call wrong, and the call itself,
// made exactly as its lifetime_misuse_attempted event records it.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/ids.h"
#include "core/room_lifetimes.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

// A call of kind `call` that the table must refuse, judged by its accessors: the first room of
// `rooms`, from `start` on, that makes it wrong (an open room or a tombstone for open, a closed
// or tombstoned room for try_acquire, a room with no lease pending for release, one with leases
// pending for clear), else `stranger` (a room the table never saw: unknown to every call but
// open, which then becomes a try_acquire of it).
sim::lifetime_misuse_attempted wrong_lifetime_call(const core::room_lifetimes& table,
                                                   core::rank_id rank, sim::lifetime_call call,
                                                   const std::vector<core::room_key>& rooms,
                                                   std::size_t start, core::room_key stranger);

// Makes the call; returns the table's refusal, or nothing when it accepted.
std::optional<core::lifetime_error> make_careless_lifetime_call(
    core::room_lifetimes& table, const sim::lifetime_misuse_attempted& call);

// What the table's accessors answer for each of `rooms` (the monitor's read after a call).
sim::room_table_read read_room_table(const core::room_lifetimes& table, core::rank_id rank,
                                     const std::vector<core::room_key>& rooms);

}  // namespace kvsim::scenarios
