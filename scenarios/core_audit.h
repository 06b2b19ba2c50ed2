#pragma once
// The audit at quiescence: once every actor has returned, a world reads its core components'
// own books through their accessors and emits what they say (sim::ledger_audited,
// sim::core_audited). The checkers compare the ledger's books with its events
// (properties/ledger_audit_checker.h) and report anything else still held as a leak (I8).
#include <vector>

#include "core/abort_token.h"
#include "core/decode_receiver.h"
#include "core/ids.h"
#include "core/page_ledger.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

// `owners`: every (room, generation) the scenario ran, for pages_of.
sim::ledger_audited audit_ledger(core::rank_id rank, const core::page_ledger& ledger,
                                 const std::vector<core::room_key>& owners);

// A prefill rank: rooms its sender still tracks or still runs chunks of, rooms its lifetime
// tracker still admits or counts chunk leases for, statuses its table still keeps, and the
// ABORT tokens its verifier still remembers once the sender tracks no room (each room that is
// over forgets its own: what stays is memory that only grows).
std::vector<sim::core_audited> audit_prefill(core::rank_id rank, const core::prefill_sender& sender,
                                             const core::room_lifetimes& lifetimes,
                                             const core::transfer_status_table& statuses,
                                             const core::abort_token_verifier& verifier,
                                             const std::vector<core::room_key>& keys);

// A decode rank: requests it registered (`keys`) that its receiver never finished, and the
// drain-ACK tokens its verifier still remembers once every request finished (each finished
// request forgets its own: what stays is memory that only grows).
sim::core_audited audit_decode(core::rank_id rank, const core::decode_receiver& receiver,
                               const core::abort_token_verifier& verifier,
                               const std::vector<core::room_key>& keys);

}  // namespace kvsim::scenarios
