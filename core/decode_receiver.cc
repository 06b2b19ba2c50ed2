#include "core/decode_receiver.h"

#include <algorithm>
#include <utility>

namespace kvsim::core {

decode_receiver::decode_receiver(rank_id rank, decode_ports ports, decode_state state, variant v)
    : rank_(rank), ports_(ports), state_(state), variant_(v) {}

void decode_receiver::emit(event_body body) { ports_.events.emit(event{rank_, std::move(body)}); }

std::optional<std::vector<page_index>> decode_receiver::prealloc(room_key key,
                                                                 std::uint32_t pages,
                                                                 std::vector<rank_id> prefill_ranks) {
  if (requests_.contains(key)) return std::nullopt;
  auto allocated = state_.ledger.allocate(key, pages);
  if (!allocated) return std::nullopt;
  request r;
  r.pages = allocated.value();
  r.prefill_ranks = std::move(prefill_ranks);
  requests_.emplace(key, std::move(r));
  return requests_.at(key).pages;
}

void decode_receiver::publish(room_key key) {
  const request& r = requests_.at(key);
  for (rank_id prefill : r.prefill_ranks) {
    ports_.control.send(prefill,
                        control_message{control_kind::metadata, rank_, key, std::nullopt, r.pages, {}});
  }
}

void decode_receiver::abort(room_key key, std::optional<std::uint64_t> deadline_us) {
  const auto it = requests_.find(key);
  if (it == requests_.end() || it->second.now != phase::transferring) return;
  arm_and_send_abort(key, deadline_us);
}

void decode_receiver::arm_and_send_abort(room_key key, std::optional<std::uint64_t> deadline_us) {
  request& r = requests_.at(key);
  // Armed before it is sent: an ACK can only ever match an abort that already exists.
  r.token = state_.issuer.issue(key);
  r.now = phase::aborting;
  r.deadline_us = deadline_us;
  emit(abort_armed{key, r.prefill_ranks, r.token->nonce});
  const abort_token token = *r.token;
  const std::vector<rank_id> targets = r.prefill_ranks;
  for (rank_id prefill : targets) {
    ports_.control.send(prefill,
                        control_message{control_kind::abort, rank_, key, token, {}, {}});
  }
  // Historical: free on abort, whatever prefill is still writing (B1).
  if (variant_.has(bug::b1_destination_reuse)) {
    release(key, release_reason::at_abort, request_outcome::aborted);
  }
}

void decode_receiver::on_message(const control_message& message) {
  switch (message.kind) {
    case control_kind::abort_ack:
      on_ack(message);
      return;
    case control_kind::chunk_ready: {
      const auto it = requests_.find(message.key);
      if (it != requests_.end()) it->second.ready.insert(message.from);
      return;
    }
    case control_kind::status: {
      const auto it = requests_.find(message.key);
      if (it == requests_.end() || message.status != kv_status::failed ||
          it->second.now != phase::transferring) {
        return;
      }
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
      return;  // not for decode
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
    if (!ack.token || !requests_.contains(key)) return;
    if (!state_.tokens.accept(*ack.token, key, ack.from)) return;  // rejection is an event
  }
  request& r = requests_.at(key);
  if (r.now != phase::aborting && r.now != phase::quarantined) return;
  if (std::find(r.prefill_ranks.begin(), r.prefill_ranks.end(), ack.from) == r.prefill_ranks.end()) {
    return;  // not a rank this abort waits for
  }
  if (!r.acked.insert(ack.from).second) return;  // a duplicate counts once
  emit(drain_ack_counted{key, ack.from, static_cast<std::uint32_t>(r.acked.size()),
                         static_cast<std::uint32_t>(r.prefill_ranks.size())});
  if (r.acked.size() == r.prefill_ranks.size()) {
    release(key, release_reason::all_acks, request_outcome::aborted);
  }
}

void decode_receiver::check_deadlines() {
  const std::uint64_t now = ports_.time.now_us();
  std::vector<room_key> expired;
  for (const auto& [key, r] : requests_) {
    if (r.now == phase::aborting && r.deadline_us && now >= *r.deadline_us) expired.push_back(key);
  }
  for (const room_key& key : expired) {
    if (variant_.has(bug::b12_deadline_release)) {
      emit(deadline_expired{key, deadline_action::released});
      release(key, release_reason::deadline, request_outcome::aborted);
    } else {
      // Never free what a transport may still write: keep the pages owned, out of reuse.
      requests_.at(key).now = phase::quarantined;
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
  const auto it = requests_.find(key);
  if (it == requests_.end() || it->second.now != phase::transferring) return;
  release(key, release_reason::completed, request_outcome::succeeded);
}

void decode_receiver::release(room_key key, release_reason reason, request_outcome outcome) {
  request& r = requests_.at(key);
  r.now = phase::done;
  emit(request_pages_released{key, reason, static_cast<std::uint32_t>(r.acked.size()),
                              static_cast<std::uint32_t>(r.prefill_ranks.size())});
  (void)state_.ledger.release_all(key);
  emit(request_finished{key, outcome});
  state_.tokens.forget(key);
}

bool decode_receiver::finished(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() && it->second.now == phase::done;
}

bool decode_receiver::quarantined(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() && it->second.now == phase::quarantined;
}

bool decode_receiver::aborting(room_key key) const {
  const auto it = requests_.find(key);
  return it != requests_.end() &&
         (it->second.now == phase::aborting || it->second.now == phase::quarantined);
}

}  // namespace kvsim::core
