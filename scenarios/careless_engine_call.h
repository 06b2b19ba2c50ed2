#pragma once
// The careless caller's calls on the engine-facing core that the core must ignore (the fault
// `misuse`, next to its ledger and room-table calls): which request makes a call one to ignore,
// judged by the core's accessors, and the call itself, made as its ignored_call_attempted
// event records it. Returns whether the core accepted it (prealloc returned pages, send_chunk
// queued a chunk, open opened a room).
#include <cstddef>
#include <optional>
#include <vector>

#include "core/decode_receiver.h"
#include "core/ids.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

// A decode call of kind `call` (decode_abort, decode_complete or decode_prealloc) on the first
// of `requests` from `start` on that the receiver must ignore it for (not transferring: done,
// aborting or quarantined), else on `stranger` (unknown: ignored too), except that a prealloc
// needs a registered request (the stranger's would be a fair one): none, no call.
std::optional<sim::ignored_call_attempted> ignored_receiver_call(const core::decode_receiver& receiver,
                                                  core::rank_id rank, sim::ignored_call call,
                                                  const std::vector<core::room_key>& requests,
                                                  std::size_t start, core::room_key stranger);
bool make_ignored_call(core::decode_receiver& receiver, const sim::ignored_call_attempted& call);

// A prefill sender call of kind `call` (a send_chunk_* kind, open_open_room or
// fail_unknown_room): for an unknown room, the stranger; for the closed room kind, the first
// of `rooms` from `start` on that the table says is closed (else the stranger); for the others
// (a second open included), the first room the table admits (else the stranger), except
// that a second open needs an open room (the stranger's would be a fair first open): none, no
// call.
std::optional<sim::ignored_call_attempted> ignored_sender_call(const core::room_lifetimes& table,
                                                core::rank_id rank, sim::ignored_call call,
                                                const std::vector<core::room_key>& rooms,
                                                std::size_t start, core::room_key stranger);
bool make_ignored_call(core::prefill_sender& sender, const sim::ignored_call_attempted& call,
                       core::rank_id decode_rank);

}  // namespace kvsim::scenarios
