#include "core/prefill_sender.h"

#include <algorithm>
#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

// Actor discipline: only the scheduler actor calls open/send_chunk/poll/finish (so `rooms_`
// entries and their chunk vectors change only between its own port calls); the bootstrap
// actor's on_abort only adds ACK targets and closes rooms. References into a room therefore
// stay valid across the port calls inside poll().

prefill_sender::prefill_sender(rank_id rank, prefill_ports ports, prefill_state state, variant v)
    : rank_(rank), ports_(ports), state_(state), variant_(v) {}

void prefill_sender::emit(event_body body) { ports_.events.emit_built(event{rank_, std::move(body)}); }

bool prefill_sender::open(room_key key, std::span<const page_index> source_pages,
                          std::span<const rank_id> decode_ranks) {
  owner_.check();
  room_lifetimes::unopened_ends ended;
  const auto opened = state_.lifetimes.open(key, &ended);
  forget_unopened(ended);
  if (!opened) {
    // Open already: a second open is the caller's mistake and changes nothing (the refusal is
    // the table's event). Tombstoned: aborted before it existed, so the request is over on
    // this rank before it began, and every decode rank waiting for it hears it failed.
    if (opened.error() != lifetime_error::tombstoned) return false;
    // Over here as a forgotten room is: the ABORT that tombstoned it is retired with it.
    state_.tokens.forget(key);
    emit(request_finished{key, request_outcome::aborted});
    for (rank_id decode : decode_ranks) send_outcome(key, decode, true);
    return false;
  }
  room& r = rooms_[key];
  r.source_pages.assign(source_pages.begin(), source_pages.end());
  r.decode_ranks.assign(decode_ranks.begin(), decode_ranks.end());
  state_.statuses.update(key, kv_status::bootstrapping);
  return true;
}

bool prefill_sender::send_chunk(room_key key, rank_id decode_rank,
                                std::span<const page_index> source_pages,
                                std::span<const page_index> destination_pages,
                                std::uint32_t siblings) {
  owner_.check();
  const auto it = rooms_.find(key);
  if (it == rooms_.end() || source_pages.size() != destination_pages.size() || siblings == 0) {
    return false;
  }
  if (!state_.lifetimes.try_acquire(key)) return false;
  const auto lease = state_.ledger.lease(key, lease_role::source, source_pages);
  if (!lease) {
    (void)state_.lifetimes.release(key);
    return false;
  }
  chunk c;
  c.decode_rank = decode_rank;
  c.lease = lease.value();
  const std::size_t n = std::min<std::size_t>(siblings, source_pages.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = i * source_pages.size() / n;
    const std::size_t to = (i + 1) * source_pages.size() / n;
    transfer_request request{key, decode_rank,
                             {source_pages.begin() + from, source_pages.begin() + to},
                             {destination_pages.begin() + from, destination_pages.begin() + to}};
    c.siblings.push_back(ports_.transfers.submit(request));
    c.ended.push_back(false);
  }
  room& r = rooms_.at(key);
  r.chunks.push_back(std::move(c));
  r.pages_queued[decode_rank] += source_pages.size();
  // Historical (Mooncake's per-room transfer info, popped once the last chunk to a decode
  // rank is queued, not once it has been written): an ABORT from that rank now finds no room
  // and is ACKed at once, while the chunk still writes (B7).
  if (variant_.has(bug::b7_cleared_room_ack) && r.pages_queued[decode_rank] >= r.source_pages.size()) {
    r.cleared_for.insert(decode_rank);
  }
  state_.statuses.update(key, kv_status::transferring);
  return true;
}

void prefill_sender::release_chunk(room_key key, chunk& c) {
  if (c.released) return;
  c.released = true;
  // A quarantined lease ends only by the transport's confirmation: every future of the chunk
  // has since reported a terminal state (or, in historical variants, was given up).
  if (c.quarantined) {
    (void)state_.ledger.confirm_quarantine(c.lease);
  } else {
    (void)state_.ledger.end_lease(c.lease);
  }
  (void)state_.lifetimes.release(key);
}

// The transport gave up waiting but cannot say the copy stopped (Mooncake's synchronous wait
// returning at its deadline while the executor still writes). The request has failed (as a
// real engine reports it), but the source pages stay leased, quarantined, and the chunk stays
// in flight, so neither a free nor a drain-ACK goes out before a later poll sees the end.
void prefill_sender::quarantine_chunk(room_key key, chunk& c) {
  if (c.quarantined || c.released) return;
  c.quarantined = true;
  (void)state_.ledger.quarantine(c.lease);
  emit(transfer_unconfirmed{key, c.lease});
  fail(key);
}

void prefill_sender::poll() {
  owner_.check();
  std::vector<room_key> keys;
  for (const auto& [key, r] : rooms_) keys.push_back(key);
  for (const room_key& key : keys) {
    room& r = rooms_.at(key);
    for (std::size_t ci = 0; ci < r.chunks.size(); ++ci) {
      chunk& c = r.chunks[ci];
      for (std::size_t si = 0; si < c.siblings.size(); ++si) {
        if (c.ended[si]) continue;
        const transfer_poll outcome = ports_.transfers.poll(c.siblings[si]);
        bool failed = outcome == transfer_poll::failed;
        if (outcome == transfer_poll::timed_out_unconfirmed && variant_.has(bug::b12_deadline_release)) {
          failed = true;  // historical: the deadline's -1 taken as "the copy is over"
        }
        if (outcome == transfer_poll::timed_out_unconfirmed && !failed) {
          quarantine_chunk(key, c);
          continue;  // not terminal: whatever the transport says, bytes may still move
        }
        if (outcome == transfer_poll::in_flight) continue;
        c.ended[si] = true;
        if (failed) {
          // The request has failed: like fail(), the room stops admitting, so no chunk queued
          // after this one writes for a request that is already over.
          fail(key);
          // Historical: the first failing future returns and the chunk is given up (B4).
          if (variant_.has(bug::b4_first_sibling_returns)) release_chunk(key, c);
        }
      }
      if (std::all_of(c.ended.begin(), c.ended.end(), [](bool e) { return e; })) {
        release_chunk(key, c);
      }
    }
    // Historical: Failed means "free the source now", whoever still reads it (B3). The
    // ledger of a B3 world frees leased pages too (release_policy::free_while_leased).
    if (variant_.has(bug::b3_source_reuse) && state_.statuses.get(key) == kv_status::failed) {
      (void)state_.ledger.release_all(key);
    }
    // Historical: the transfer's end cleared the room, and the ACK target with it (B5).
    if (variant_.has(bug::b5_lost_ack_target) && !in_flight(key)) r.ack_targets.clear();
    send_due_acks(key, r);
    forget_if_done(key);
  }
}

bool prefill_sender::in_flight(room_key key) const {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return false;
  return std::any_of(it->second.chunks.begin(), it->second.chunks.end(),
                     [](const chunk& c) { return !c.released; });
}

bool prefill_sender::drained(room_key key) const {
  return state_.lifetimes.is_closed(key) && state_.lifetimes.pending_leases(key) == 0 &&
         !in_flight(key);
}

void prefill_sender::send_ack(room_key key, const ack_target& target) {
  emit(drain_ack_sent{key, target.decode_rank, target.token.nonce, state_.lifetimes.is_closed(key),
                      static_cast<std::uint32_t>(in_flight(key) ? 1 : 0)});
  control_message ack{control_kind::abort_ack, rank_, key, target.token, {}, {}};
  // Its own proof: the echo alone could be made by anyone who saw the ABORT go by.
  state_.tokens.prove(ack, target.decode_rank);
  ports_.control.send(target.decode_rank, ack);
}

void prefill_sender::send_due_acks(room_key key, room& r) {
  // Historical: the ACK went out on receipt, whatever was still writing (B2).
  if (!drained(key) && !variant_.has(bug::b2_early_ack)) return;
  const std::vector<ack_target> due = std::exchange(r.ack_targets, {});
  for (const ack_target& target : due) send_ack(key, target);
}

void prefill_sender::on_abort(const control_message& abort) {
  owner_.check();
  if (!abort.token) return;  // an unauthenticated ABORT touches nothing
  const room_key key = abort.key;
  const auto it = rooms_.find(key);
  // An open room knows the decode ranks it serves: an ABORT from any other rank is refused.
  // Before the open nobody here knows them, and the ABORT tombstones the room as always.
  const bool party = it == rooms_.end() || it->second.decode_ranks.empty() ||
                     std::find(it->second.decode_ranks.begin(), it->second.decode_ranks.end(),
                               abort.from) != it->second.decode_ranks.end();
  // The verifier's memory of a room's ABORTs lives as long as the room: forgotten (retired)
  // when the room is (forget_if_done), so it never grows with the requests served. An
  // authentic ABORT of a room that is over, a replay or a late first one from another decode
  // rank alike, is closed as an incarnation that is over (a finished tombstone, once: a close
  // is idempotent; never a before-open one, which a stream of replays would evict the live
  // ones with) and drain-ACKed, since nothing of it is in flight here.
  const status<token_rejection> accepted = state_.tokens.accept_abort(*abort.token, key, abort.from, party);
  if (!accepted && accepted.error() != token_rejection::retired) return;  // every rejection is an event
  const ack_target target{abort.from, *abort.token};
  if (!accepted) {
    // Over here, its ABORTs forgotten: nothing to register, nothing in flight to wait for.
    (void)state_.lifetimes.close_over(key);
    send_ack(key, target);
    return;
  }
  if (it == rooms_.end() || it->second.cleared_for.contains(abort.from)) {
    // No sender for this (room, generation): not opened yet, or finished and drained. A
    // tombstone keeps a late open from ever writing (B10 restores the old: none); nothing of
    // it is in flight here, so the drain-ACK can go at once.
    if (!variant_.has(bug::b10_no_tombstone)) {
      room_lifetimes::unopened_ends ended;
      (void)state_.lifetimes.close(key, &ended);
      forget_unopened(ended);
    }
    emit(ack_target_registered{key, target.decode_rank, target.token.nonce});
    send_ack(key, target);
    return;
  }
  const auto register_target = [&] {
    std::vector<ack_target>& targets = it->second.ack_targets;
    // Historical: one target per room, so a second decode rank overwrites the first (B6).
    if (variant_.has(bug::b6_one_ack_target)) targets.clear();
    targets.push_back(target);
    emit(ack_target_registered{key, target.decode_rank, target.token.nonce});
  };
  const auto fail_logically = [&] {
    it->second.failed = true;
    state_.statuses.update(key, kv_status::failed);
    (void)state_.lifetimes.close(key);
  };
  if (variant_.has(bug::b9_target_before_failed)) {
    // Historical order: the target first, and a drain check that sees an open, idle room.
    register_target();
    if (!in_flight(key) || variant_.has(bug::b2_early_ack)) {
      const std::vector<ack_target> due = std::exchange(it->second.ack_targets, {});
      for (const ack_target& t : due) send_ack(key, t);
    }
    fail_logically();
    return;
  }
  fail_logically();  // phase one: the failure is logical and admission is closed
  register_target();
  send_due_acks(key, it->second);
}

void prefill_sender::fail(room_key key) {
  owner_.check();
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return;
  it->second.failed = true;
  state_.statuses.update(key, kv_status::failed);
  (void)state_.lifetimes.close(key);
}

void prefill_sender::finish(room_key key) {
  owner_.check();
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return;
  it->second.finished = true;
  // Deferred by the ledger while any transfer still holds a lease on them.
  (void)state_.ledger.release_all(key);
  forget_if_done(key);
}

// What the request came to, told to every decode rank that waits for it (SGLang's and
// Mooncake's prefill report the transfer's status to decode): chunk_ready once the last chunk
// ended, a failed status otherwise, so that a decode rank that did not abort itself still
// drains (it aborts and waits for every drain-ACK) before it frees.
void prefill_sender::send_outcome(room_key key, rank_id decode, bool failed) {
  control_message outcome =
      failed ? control_message{control_kind::status, rank_, key, std::nullopt, {}, kv_status::failed}
             : control_message{control_kind::chunk_ready, rank_, key, std::nullopt, {}, {}};
  state_.tokens.prove(outcome, decode);
  emit(outcome_reported{key, decode, failed});
  ports_.control.send(decode, outcome);
}

// Requests whose before-open tombstones ended without their open (a newer generation opened,
// or the table evicted them): they never reached this rank's scheduler (an engine that drops
// a request aborted while it waited for admission never opens its room), so nothing but the
// tombstone ends them, and their ABORTs' memory goes with it. A replay of one is then refused
// as retired and answered as for any room that is over.
void prefill_sender::forget_unopened(const room_lifetimes::unopened_ends& ended) {
  for (const room_key& key : ended) state_.tokens.forget(key);
}

void prefill_sender::forget_if_done(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end() || !it->second.finished || in_flight(key)) return;
  room& r = it->second;
  // Nothing in flight: poll() has released the last chunk, and the same poll sent every ACK
  // that was due (an ABORT registers targets only while the room is being drained). So the
  // request is over here, once: decode hears it, and the room is forgotten.
  KVSIM_INVARIANT(r.ack_targets.empty(), "a room with nothing in flight owes no drain-ACK");
  for (rank_id decode : r.decode_ranks) send_outcome(key, decode, r.failed);
  // What decode heard is what the request came to here: one flag says both.
  const request_outcome outcome = r.failed ? request_outcome::aborted : request_outcome::succeeded;
  (void)state_.lifetimes.clear(key);
  state_.statuses.erase(key);
  state_.tokens.forget(key);
  rooms_.erase(it);
  emit(request_finished{key, outcome});
}

}  // namespace kvsim::core
