#pragma once
// DOMAIN.md I2: an ABORT_ACK for (room, generation, token) is sent only when that room is
// closed and drained on that rank.
//
// Checked at each drain_ack_sent of rank r for request k, from the events alone (the ACK's
// own room_closed and in_flight fields are what the sender believed, never evidence of a
// drain; but an ACK its own fields call early is early: a sender that reports a room open or
// a transfer in flight as it ACKs fires even where the events show it drained):
//   - closed: a room_closed of k on r (tombstone or not) came earlier in the log;
//   - drained: no transfer of k with source rank r was submitted and has not ended yet
//     (a transfer_timed_out does not end it: the copy may still run, DOMAIN.md B12), and no
//     chunk lease of k on r is pending (chunk_admitted minus chunk_released).
// Chunk leases are anonymous, so a release ends the oldest pending admission; only the count
// is exact, the steps the message names for the pending ones are the latest admissions.
// The finding names every reason at once; its evidence is the ACK, the open (or the clear)
// of a room that was never closed, every running transfer's submission and every pending
// admission.
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class ack_after_drain_checker : public sim::checker {
 public:
  const char* name() const override { return "ack_after_drain"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;

  struct room_state {
    std::optional<event_mark> opened;
    std::optional<event_mark> closed;
    std::optional<event_mark> cleared;  // forgotten by the tracker (without a close: not closed)
    std::deque<event_mark> pending_chunks;  // admissions not yet released, oldest first
  };
  struct running_transfer {
    core::room_key owner;
    core::rank_id source_rank = 0;
    event_mark submitted;
  };

  void apply(const core::event& e, event_mark at);
  std::optional<sim::finding> check_ack(const core::drain_ack_sent& ack, core::rank_id rank,
                                        event_mark at) const;

  std::map<rank_room, room_state> rooms_;
  std::map<sim::transfer_id, running_transfer> running_;  // submitted, not yet ended
};

}  // namespace kvsim::properties
