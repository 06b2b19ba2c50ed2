#include "core/room_lifetimes.h"

#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

room_lifetimes::room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t tombstones_max)
    : rank_(rank), sink_(sink), tombstones_max_(tombstones_max) {
  // A zero-sized table would make every close-before-open a silent no-op: refuse to exist.
  KVSIM_INVARIANT(tombstones_max > 0, "room_lifetimes needs room for at least one tombstone");
}

status<lifetime_error> room_lifetimes::open(room_key key) {
  if (tombstones_.contains(key)) return refuse(lifetime_error::tombstoned, key);
  if (rooms_.contains(key)) return refuse(lifetime_error::already_open, key);
  rooms_.emplace(key, room_state{});
  emit(room_opened{key});
  return done{};
}

status<lifetime_error> room_lifetimes::try_acquire(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) {
    return refuse(tombstones_.contains(key) ? lifetime_error::room_closed
                                            : lifetime_error::unknown_room,
                  key);
  }
  if (it->second.closed) return refuse(lifetime_error::room_closed, key);
  ++it->second.pending_leases;
  emit(chunk_admitted{key, it->second.pending_leases});
  return done{};
}

status<lifetime_error> room_lifetimes::release(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return refuse(lifetime_error::unknown_room, key);
  if (it->second.pending_leases == 0) return refuse(lifetime_error::lease_underflow, key);
  --it->second.pending_leases;
  emit(chunk_released{key, it->second.pending_leases});
  return done{};
}

status<lifetime_error> room_lifetimes::close(room_key key) {
  const auto it = rooms_.find(key);
  if (it != rooms_.end()) {
    it->second.closed = true;
    emit(room_closed{key, it->second.pending_leases, false});
    return done{};
  }
  if (!tombstones_.contains(key)) add_tombstone(key);
  emit(room_closed{key, 0, true});
  return done{};
}

status<lifetime_error> room_lifetimes::clear(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return refuse(lifetime_error::unknown_room, key);
  if (it->second.pending_leases > 0) return refuse(lifetime_error::leases_pending, key);
  const bool was_closed = it->second.closed;
  rooms_.erase(it);
  emit(room_cleared{key});
  if (was_closed) add_tombstone(key);
  return done{};
}

bool room_lifetimes::is_admitting(room_key key) const {
  const auto it = rooms_.find(key);
  return it != rooms_.end() && !it->second.closed;
}

bool room_lifetimes::is_closed(room_key key) const {
  const auto it = rooms_.find(key);
  if (it != rooms_.end()) return it->second.closed;
  return tombstones_.contains(key);
}

std::uint32_t room_lifetimes::pending_leases(room_key key) const {
  const auto it = rooms_.find(key);
  return it == rooms_.end() ? 0 : it->second.pending_leases;
}

void room_lifetimes::add_tombstone(room_key key) {
  if (tombstones_.size() >= tombstones_max_) {
    const room_key oldest = tombstone_order_.front();
    tombstone_order_.pop_front();
    tombstones_.erase(oldest);
    emit(tombstone_evicted{oldest});
  }
  tombstones_.insert(key);
  tombstone_order_.push_back(key);
  KVSIM_INVARIANT(tombstones_.size() == tombstone_order_.size(),
                  "tombstone set and eviction order disagree");
}

status<lifetime_error> room_lifetimes::refuse(lifetime_error error, room_key key) {
  emit(lifetime_refused{error, key});
  return error;
}

void room_lifetimes::emit(event_body body) { sink_.emit(event{rank_, std::move(body)}); }

}  // namespace kvsim::core
