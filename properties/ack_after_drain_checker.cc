#include "properties/ack_after_drain_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

void ack_after_drain_checker::apply(const core::event& e, event_mark at) {
  if (const auto* opened = std::get_if<core::room_opened>(&e.body)) {
    room_state& room = rooms_[{e.rank, opened->key}];
    if (!room.opened) room.opened = at;
  } else if (const auto* closed = std::get_if<core::room_closed>(&e.body)) {
    room_state& room = rooms_[{e.rank, closed->key}];
    if (!room.closed) room.closed = at;
  } else if (const auto* cleared = std::get_if<core::room_cleared>(&e.body)) {
    rooms_[{e.rank, cleared->key}].cleared = at;
  } else if (const auto* admitted = std::get_if<core::chunk_admitted>(&e.body)) {
    rooms_[{e.rank, admitted->key}].pending_chunks.push_back(at);
  } else if (const auto* released = std::get_if<core::chunk_released>(&e.body)) {
    // A release without a pending admission is the tracker's misuse, not this invariant's.
    room_state& room = rooms_[{e.rank, released->key}];
    if (!room.pending_chunks.empty()) room.pending_chunks.pop_front();
  }
}

sim::event_kinds ack_after_drain_checker::subscriptions() const {
  return sim::event_kinds::of<core::drain_ack_sent, core::room_opened, core::room_closed,
                              core::room_cleared, core::chunk_admitted, core::chunk_released,
                              sim::transfer_submitted, sim::transfer_ended>();
}

std::optional<sim::finding> ack_after_drain_checker::observe(const sim::sim_event& e,
                                                             std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    if (const auto* ack = std::get_if<core::drain_ack_sent>(&decided->what.body)) {
      return check_ack(*ack, decided->what.rank, at);
    }
    apply(decided->what, at);
  } else if (const auto* submitted = std::get_if<sim::transfer_submitted>(&e.body)) {
    running_.insert_or_assign(submitted->transfer,
                              running_transfer{submitted->owner, submitted->source_rank, at});
  } else if (const auto* ended = std::get_if<sim::transfer_ended>(&e.body)) {
    running_.erase(ended->transfer);
  }
  return std::nullopt;
}

std::optional<sim::finding> ack_after_drain_checker::check_ack(const core::drain_ack_sent& ack,
                                                               core::rank_id rank,
                                                               event_mark at) const {
  // Words only for a finding: this runs at every drain-ACK.
  const auto request = [&] { return core::to_string(ack.key); };
  std::vector<std::string> reasons;
  std::vector<std::size_t> evidence{at.index};

  const auto room = rooms_.find({rank, ack.key});
  const bool closed = room != rooms_.end() && room->second.closed;
  if (!closed) {
    if (room != rooms_.end() && room->second.cleared) {
      reasons.push_back(request() + " was cleared at step " +
                        std::to_string(room->second.cleared->step) + " without being closed");
      evidence.push_back(room->second.cleared->index);
    } else if (room != rooms_.end() && room->second.opened) {
      reasons.push_back(request() + " was still open (opened at step " +
                        std::to_string(room->second.opened->step) + ")");
      evidence.push_back(room->second.opened->index);
    } else {
      reasons.push_back(request() + " had not been closed on that rank");
    }
  }

  std::vector<std::string> ids;
  std::vector<std::uint64_t> submitted_steps;
  for (const auto& [id, transfer] : running_) {  // ordered by id: deterministic
    if (transfer.owner != ack.key || transfer.source_rank != rank) continue;
    ids.push_back(std::to_string(id));
    submitted_steps.push_back(transfer.submitted.step);
    evidence.push_back(transfer.submitted.index);
  }
  if (!ids.empty()) {
    reasons.push_back((ids.size() == 1 ? "transfer " : "transfers ") + join_and(ids) +
                      " of that request " + (ids.size() == 1 ? "was" : "were") +
                      " still running (submitted at " + steps_text(submitted_steps) + ")");
  }

  if (room != rooms_.end() && !room->second.pending_chunks.empty()) {
    const std::size_t n = room->second.pending_chunks.size();
    std::vector<std::uint64_t> admitted_steps;
    for (const event_mark& admitted : room->second.pending_chunks) {
      admitted_steps.push_back(admitted.step);
      evidence.push_back(admitted.index);
    }
    reasons.push_back(std::to_string(n) + (n == 1 ? " chunk lease" : " chunk leases") +
                      " of that request " + (n == 1 ? "was" : "were") +
                      " still pending (admitted at " + steps_text(admitted_steps) + ")");
  }

  // What the sender itself reported believing: an ACK it sent knowing the room open or a
  // transfer in flight is early by its own account, even when the world's view agrees it
  // had drained (the claim, not the drain, is then what is wrong).
  if (reasons.empty() && (!ack.room_closed || ack.in_flight > 0)) {
    reasons.push_back(std::string("the sender itself reported the room ") +
                      (ack.room_closed ? "closed" : "open") + " with " +
                      std::to_string(ack.in_flight) + " transfer(s) in flight");
  }
  if (reasons.empty()) return std::nullopt;
  sort_evidence(evidence);
  std::string message = "I2: rank " + std::to_string(rank) + " sent a drain-ACK for " + request() +
                        " to rank " + std::to_string(ack.to) + " at step " +
                        std::to_string(at.step) + " while " + join_and(reasons);
  std::string claim = "the drain-ACK claimed the room " +
                      std::string(ack.room_closed ? "closed" : "open") + " with " +
                      std::to_string(ack.in_flight) + " transfer(s) in flight";
  return sim::finding{"I2", std::move(message), std::move(evidence), {std::move(claim)}};
}

}  // namespace kvsim::properties
