#include "core/decode_receiver.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

decode_receiver::decode_receiver(rank_id rank, decode_ports ports, decode_state state, variant v,
                                 decode_limits limits)
    : rank_(rank),
      ports_(ports),
      state_(state),
      variant_(v),
      finished_(limits.finished_remembered),
      early_order_(limits.early_requests_held) {}

void decode_receiver::emit(event_body body) { ports_.events.emit_built(event{rank_, std::move(body)}); }

std::optional<std::vector<page_index>> decode_receiver::prealloc(room_key key,
                                                                 std::uint32_t pages,
                                                                 std::vector<rank_id> prefill_ranks) {
  owner_.check();
  if (requests_.contains(key) || finished_.contains(key)) return std::nullopt;
  auto allocated = state_.ledger.allocate(key, pages);
  if (!allocated) return std::nullopt;
  return track(key, allocated.value(), std::move(prefill_ranks));
}

std::optional<std::vector<page_index>> decode_receiver::prealloc_exact(
    room_key key, std::span<const page_index> pages, std::vector<rank_id> prefill_ranks) {
  owner_.check();
  if (requests_.contains(key) || finished_.contains(key)) return std::nullopt;
  auto allocated = state_.ledger.allocate_exact(key, pages);
  if (!allocated) return std::nullopt;
  return track(key, allocated.value(), std::move(prefill_ranks));
}

const std::vector<page_index>& decode_receiver::track(room_key key, std::vector<page_index> pages,
                                                      std::vector<rank_id> prefill_ranks) {
  request r;
  r.pages = std::move(pages);
  r.prefill_ranks = std::move(prefill_ranks);
  for (rank_id prefill : r.prefill_ranks) waiting_on_[prefill].insert(key);
  return requests_.emplace(key, std::move(r)).first->second.pages;
}

void decode_receiver::reject(room_key key, std::vector<rank_id> prefill_ranks) {
  owner_.check();
  if (requests_.contains(key) || finished_.contains(key)) return;
  (void)track(key, {}, std::move(prefill_ranks));
  arm_and_send_abort(key, std::nullopt);
  if (!requests_.contains(key)) return;  // a historical variant released it at the abort
  requests_.at(key).now = phase::done;
  emit(request_finished{key, request_outcome::failed});
  forget(key);
}

void decode_receiver::publish(room_key key) {
  owner_.check();
  request& r = requests_.at(key);
  lease_pages(r, key);  // from the metadata on, prefill's transport may write into them
  for (rank_id prefill : r.prefill_ranks) {
    ports_.control.send(prefill,
                        control_message{control_kind::metadata, rank_, key, std::nullopt, r.pages, {}});
  }
  deliver_early(key);
}

// A message for a request not registered here: a transport may deliver a prefill rank's
// outcome before this rank preallocated the request (the prefill failed it early). Held until
// the request is published, one per (kind, sender), for a bounded number of requests.
void decode_receiver::hold_early(const control_message& message) {
  if (const auto evicted = early_order_.insert(message.key)) {
    const auto dropped = early_.find(*evicted);
    emit(early_messages_dropped{*evicted, static_cast<std::uint32_t>(dropped->second.size())});
    early_.erase(dropped);
  }
  early_[message.key].insert_or_assign({message.kind, message.from}, message);
}

void decode_receiver::deliver_early(room_key key) {
  // Older generations of this room will never register here now: what they hold is dropped.
  for (const room_key& old : early_order_.erase_older(key.room, key.generation)) {
    const auto dropped = early_.find(old);
    emit(early_messages_dropped{old, static_cast<std::uint32_t>(dropped->second.size())});
    early_.erase(dropped);
  }
  const auto held = early_.find(key);
  if (held == early_.end()) return;
  const auto messages = std::move(held->second);
  early_.erase(held);
  early_order_.erase(key);
  for (const auto& [from, message] : messages) {
    if (!requests_.contains(key)) return;  // an earlier one finished it
    on_progress(message);
  }
}

void decode_receiver::abort(room_key key, std::optional<std::uint64_t> deadline_us) {
  owner_.check();
  const auto it = requests_.find(key);
  if (it == requests_.end() || it->second.now != phase::transferring) return;
  arm_and_send_abort(key, deadline_us);
}

void decode_receiver::arm_and_send_abort(room_key key, std::optional<std::uint64_t> deadline_us) {
  request& r = requests_.at(key);
  // Armed before it is sent: an ACK can only ever match an abort that already exists.
  // One token per prefill rank, bound to it: one peer's token never serves for another's ACK.
  for (rank_id prefill : r.prefill_ranks) r.tokens.insert_or_assign(prefill, state_.issuer.issue(key, prefill));
  r.now = phase::aborting;
  r.deadline_us = deadline_us;
  if (deadline_us) deadlines_.emplace(*deadline_us, key);
  emit(abort_armed{key, r.prefill_ranks,
                   r.tokens.empty() ? 0 : r.tokens.at(r.prefill_ranks.front()).nonce, deadline_us});
  for (rank_id prefill : r.prefill_ranks) {
    ports_.control.send(prefill, control_message{control_kind::abort, rank_, key,
                                                 r.tokens.at(prefill), {}, {}});
  }
  // Historical: free on abort, whatever prefill is still writing (B1).
  if (variant_.has(bug::b1_destination_reuse)) {
    release(key, release_reason::at_abort, request_outcome::aborted);
  }
}

void decode_receiver::on_message(const control_message& message) {
  owner_.check();
  switch (message.kind) {
    case control_kind::abort_ack:
      on_ack(message);
      return;
    case control_kind::chunk_ready:
    case control_kind::status:
      // Progress frees pages (a complete transfer) or aborts a request: only its sender's
      // proof under their link's key says who sent it. Checked before anything is held, so a
      // rank without the key cannot fill the early buffer either.
      if (!state_.tokens.proven(message)) {
        state_.tokens.refuse(message.key, message.key, 0, token_rejection::unproven);
        return;
      }
      if (requests_.contains(message.key)) {
        on_progress(message);
      } else if (!finished_.contains(message.key)) {
        hold_early(message);
      }  // else: late news of a request that is over
      return;
    case control_kind::metadata:
    case control_kind::abort:
      return;  // not for decode
  }
}

void decode_receiver::on_progress(const control_message& message) {
  request& r = requests_.at(message.key);
  // Only the request's own prefill ranks say how its transfer goes; checked here, when the
  // request is known, for messages held early too (they are delivered at publish).
  if (!expects(r, message.from)) {
    state_.tokens.refuse(message.key, message.key, 0, token_rejection::not_a_party);
    return;
  }
  switch (message.kind) {
    case control_kind::chunk_ready:
      r.ready.insert(message.from);
      return;
    case control_kind::status: {
      if (message.status != kv_status::failed || r.now != phase::transferring) return;
      // Prefill failed on its own (B8). The fix still drains: abort, wait for every ACK.
      if (variant_.has(bug::b8_local_failure_release)) {
        release(message.key, release_reason::local_failure, request_outcome::failed);
        return;
      }
      arm_and_send_abort(message.key, std::nullopt);
      return;
    }
    case control_kind::metadata:
    case control_kind::abort:
    case control_kind::abort_ack:
      return;  // not progress
  }
}

void decode_receiver::on_ack(const control_message& ack) {
  room_key key = ack.key;
  if (variant_.has(bug::b11_stale_ack)) {
    // Historical: ACKs matched by room id alone, to whatever request holds the room now.
    const auto it = std::find_if(requests_.begin(), requests_.end(), [&](const auto& entry) {
      return entry.first.room == ack.key.room && entry.second.now != phase::done;
    });
    if (it == requests_.end()) return;
    key = it->first;
  } else {
    if (!ack.token) return;
    // Only an abort still waiting hears an ACK. One for a request that finished here meets its
    // retired key in the verifier, which refuses it with the reason on the record and
    // remembers nothing; one for a request not aborting is dropped unread (accepting it would
    // make the verifier remember a token no abort asked for).
    const auto waiting = requests_.find(key);
    if (waiting == requests_.end() || !awaits_acks(waiting->second)) {
      if (finished_.contains(key)) (void)state_.tokens.accept_ack(ack, key, true, nullptr);
      return;
    }
    // Counted only from a rank this abort waits for, echoing the token issued to it now.
    const request& asked = waiting->second;
    const auto issued = asked.tokens.find(ack.from);
    if (!state_.tokens.accept_ack(ack, key, expects(asked, ack.from),
                                  issued == asked.tokens.end() ? nullptr : &issued->second)) {
      return;  // rejection is an event
    }
  }
  request& r = requests_.at(key);
  if (!awaits_acks(r)) return;  // B11's match by room may find a request not aborting
  if (!expects(r, ack.from)) return;  // B11's match by room does not ask the verifier
  if (!r.acked.insert(ack.from).second) return;  // a duplicate counts once
  emit(drain_ack_counted{key, ack.from, static_cast<std::uint32_t>(r.acked.size()),
                         static_cast<std::uint32_t>(r.prefill_ranks.size())});
  if (settled(r)) finish_abort(key);
}

bool decode_receiver::expects(const request& r, rank_id from) {
  return std::find(r.prefill_ranks.begin(), r.prefill_ranks.end(), from) != r.prefill_ranks.end();
}

bool decode_receiver::settled(const request& r) const {
  return settled_count(r) == r.prefill_ranks.size();
}

std::uint32_t decode_receiver::settled_count(const request& r) const {
  return static_cast<std::uint32_t>(
      std::count_if(r.prefill_ranks.begin(), r.prefill_ranks.end(), [&](rank_id p) {
        return r.acked.contains(p) || r.torn_down.contains(p);
      }));
}

void decode_receiver::finish_abort(room_key key) {
  const request& r = requests_.at(key);
  release(key, r.torn_down.empty() ? release_reason::all_acks : release_reason::acks_and_teardowns,
          request_outcome::aborted);
}

// The writer is remote, so the destination lease stands for whatever its transport may post.
void decode_receiver::lease_pages(request& r, room_key key) {
  if (r.receiving) return;
  const auto lease = state_.ledger.lease(key, lease_role::destination, r.pages);
  KVSIM_INVARIANT(lease.ok(), "an unfinished request owns its pages and none retires");
  r.receiving = lease.value();
}

// Out of reuse, still owned: the destination lease on every page of the request, quarantined.
void decode_receiver::hold_pages(room_key key) {
  request& r = requests_.at(key);
  if (r.receiving_quarantined) return;
  lease_pages(r, key);
  const auto quarantined = state_.ledger.quarantine(*r.receiving);
  KVSIM_INVARIANT(quarantined.ok(), "the request's own destination lease can be quarantined");
  r.receiving_quarantined = true;
}

void decode_receiver::check_peers() {
  owner_.check();
  // Only requests that wait on a rank that is not alive have anything to do: O(peers) when
  // every peer lives. They are handled in key order, as one scan of all of them would.
  std::set<room_key> touched;
  for (const auto& [peer, keys] : waiting_on_) {
    if (ports_.peers.state(peer) != peer_state::alive) touched.insert(keys.begin(), keys.end());
  }
  for (const room_key& key : touched) {
    if (!requests_.contains(key)) continue;
    const std::vector<rank_id> expected = requests_.at(key).prefill_ranks;
    for (rank_id peer : expected) {
      if (!requests_.contains(key)) break;  // finished by an earlier peer's handling
      const request& r = requests_.at(key);
      const peer_state state = ports_.peers.state(peer);
      if (state == peer_state::alive || r.acked.contains(peer)) continue;
      // Its chunks all ended before it died: nothing of it can land in this request.
      if (r.now == phase::transferring && r.ready.contains(peer)) continue;
      if (!r.lost.contains(peer)) on_peer_lost(key, peer, state);
      if (!requests_.contains(key)) break;
      if (state == peer_state::torn_down && !requests_.at(key).torn_down.contains(peer)) {
        count_teardown(key, peer);
      }
    }
  }
}

void decode_receiver::on_peer_lost(room_key key, rank_id peer, peer_state state) {
  requests_.at(key).lost.insert(peer);
  // Historical: a lost heartbeat is a failure decode did not start, and frees at once (B8),
  // while the dead rank's posted writes may still land.
  if (variant_.has(bug::b8_local_failure_release)) {
    emit(peer_death_handled{key, peer, peer_death_action::released});
    release(key, release_reason::local_failure, request_outcome::failed);
    return;
  }
  // It will never send its chunks: the request is over. The survivors drain as for any abort.
  if (requests_.at(key).now == phase::transferring) arm_and_send_abort(key, std::nullopt);
  if (!requests_.contains(key)) return;  // B1 freed at the abort
  if (state == peer_state::torn_down) {
    emit(peer_death_handled{key, peer, peer_death_action::already_torn_down});
    return;
  }
  hold_pages(key);
  emit(peer_death_handled{key, peer, peer_death_action::quarantined});
}

void decode_receiver::count_teardown(room_key key, rank_id peer) {
  request& r = requests_.at(key);
  KVSIM_INVARIANT(r.now == phase::aborting || r.now == phase::quarantined,
                  "a teardown is counted only for a request that drains");
  r.torn_down.insert(peer);
  emit(teardown_counted{key, peer, settled_count(r),
                        static_cast<std::uint32_t>(r.prefill_ranks.size())});
  if (settled(r)) finish_abort(key);
}

void decode_receiver::check_deadlines() {
  owner_.check();
  const std::uint64_t now = ports_.time.now_us();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const room_key key = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    KVSIM_INVARIANT(requests_.at(key).now == phase::aborting,
                    "only an armed abort has a deadline pending");
    if (variant_.has(bug::b12_deadline_release)) {
      emit(deadline_expired{key, deadline_action::released});
      release(key, release_reason::deadline, request_outcome::aborted);
    } else {
      // Never free what a transport may still write: keep the pages owned, out of reuse.
      requests_.at(key).now = phase::quarantined;
      hold_pages(key);
      emit(deadline_expired{key, deadline_action::quarantined});
    }
  }
}

bool decode_receiver::transfer_complete(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() && it->second.now == phase::transferring &&
         it->second.ready.size() == it->second.prefill_ranks.size();
}

void decode_receiver::complete(room_key key) {
  owner_.check();
  const auto it = requests_.find(key);
  if (it == requests_.end() || it->second.now != phase::transferring) return;
  release(key, release_reason::completed, request_outcome::succeeded);
}

void decode_receiver::release(room_key key, release_reason reason, request_outcome outcome) {
  request& r = requests_.at(key);
  r.now = phase::done;
  emit(request_pages_released{key, reason, static_cast<std::uint32_t>(r.acked.size()),
                              static_cast<std::uint32_t>(r.prefill_ranks.size())});
  // Settled (every writer ACKed, was torn down, or reported its chunks done): the lease ends,
  // a quarantine is confirmed, and the pages are free. (Historical variants get here
  // unsettled, and so free what may still be written: as their code held no lease at all.)
  if (const auto lease = std::exchange(r.receiving, {})) {
    if (r.receiving_quarantined) {
      (void)state_.ledger.confirm_quarantine(*lease);
    } else {
      (void)state_.ledger.end_lease(*lease);
    }
  }
  (void)state_.ledger.release_all(key);
  emit(request_finished{key, outcome});
  forget(key);
}

std::optional<std::vector<page_index>> decode_receiver::hand_over(room_key key) {
  owner_.check();
  if (!transfer_complete(key)) return std::nullopt;
  request& r = requests_.at(key);
  r.now = phase::done;
  // Every prefill rank reported its chunks done: nothing of theirs lands any more.
  if (const auto lease = std::exchange(r.receiving, {})) (void)state_.ledger.end_lease(*lease);
  std::vector<page_index> pages = std::move(r.pages);
  forget(key);
  return pages;
}

void decode_receiver::forget(room_key key) {
  request& r = requests_.at(key);
  state_.tokens.forget(key);
  // Forgotten: nothing of a finished request stays but its place among the recently finished.
  if (r.deadline_us) deadlines_.erase({*r.deadline_us, key});
  for (rank_id prefill : r.prefill_ranks) {
    const auto waiting = waiting_on_.find(prefill);
    if (waiting == waiting_on_.end()) continue;  // a rank named twice
    waiting->second.erase(key);
    if (waiting->second.empty()) waiting_on_.erase(waiting);
  }
  requests_.erase(key);
  (void)finished_.insert(key);
}

bool decode_receiver::finished(room_key key) const { return finished_.contains(key); }

bool decode_receiver::quarantined(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() && it->second.now == phase::quarantined;
}

bool decode_receiver::aborting(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() && awaits_acks(it->second);
}

std::vector<std::string> decode_receiver::check_consistency() const {
  std::vector<std::string> problems;
  for (const auto& [prefill, keys] : waiting_on_) {
    if (keys.empty()) {
      problems.push_back("rank " + std::to_string(prefill) + " indexed with no request");
    }
    for (const room_key& key : keys) {
      const auto it = requests_.find(key);
      if (it == requests_.end()) {
        problems.push_back(to_string(key) + " indexed under rank " + std::to_string(prefill) +
                           " but not live");
      } else if (std::find(it->second.prefill_ranks.begin(), it->second.prefill_ranks.end(),
                           prefill) == it->second.prefill_ranks.end()) {
        problems.push_back(to_string(key) + " indexed under rank " + std::to_string(prefill) +
                           ", which it does not wait for");
      }
    }
  }
  // A deadline is pending while its abort waits for ACKs; once it passed (quarantined) or the
  // abort drained, it is spent.
  const auto pending_deadline = [](const request& r) {
    return r.deadline_us && r.now == phase::aborting;
  };
  for (const auto& [deadline_us, key] : deadlines_) {
    const auto it = requests_.find(key);
    if (it == requests_.end() || !pending_deadline(it->second) ||
        *it->second.deadline_us != deadline_us) {
      problems.push_back(to_string(key) + " has a deadline pending that no waiting abort owns");
    }
  }
  for (const auto& [key, r] : requests_) {
    for (rank_id prefill : r.prefill_ranks) {
      const auto waiting = waiting_on_.find(prefill);
      if (waiting == waiting_on_.end() || !waiting->second.contains(key)) {
        problems.push_back(to_string(key) + " waits for rank " + std::to_string(prefill) +
                           " but is not indexed under it");
      }
    }
    if (pending_deadline(r) && !deadlines_.contains({*r.deadline_us, key})) {
      problems.push_back(to_string(key) + " has a deadline the deadline set does not hold");
    }
    if (finished_.contains(key)) problems.push_back(to_string(key) + " is live and finished");
  }
  // The order is a set of keys without iteration: equal sizes and every held key ordered
  // make the two hold the same requests.
  if (early_.size() != early_order_.size()) {
    problems.push_back("the early buffer holds " + std::to_string(early_.size()) +
                       " requests, its eviction order " + std::to_string(early_order_.size()));
  }
  for (const auto& [key, messages] : early_) {
    if (!early_order_.contains(key)) {
      problems.push_back(to_string(key) + " held early but not ordered");
    }
    if (messages.empty()) problems.push_back(to_string(key) + " held early with no message");
  }
  return problems;
}

}  // namespace kvsim::core
