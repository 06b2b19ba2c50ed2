#include "core/room_lifetimes.h"

#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

room_lifetimes::room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t tombstones_max)
    : room_lifetimes(rank, sink, tombstones_max, tombstones_max) {}

room_lifetimes::room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t before_open_max,
                               std::uint32_t finished_max)
    : rank_(rank), sink_(sink), before_open_(before_open_max), finished_(finished_max) {}

status<lifetime_error> room_lifetimes::open(room_key key, unopened_ends* ended) {
  if (before_open_.erase(key)) {
    // The late sender B10's tombstone exists for: refused, and its incarnation is over.
    const auto refused = refuse(lifetime_error::tombstoned, key);
    add_tombstone(finished_, tombstone_table::finished, key);
    return refused;
  }
  if (finished_.contains(key)) return refuse(lifetime_error::tombstoned, key);
  if (rooms_.contains(key)) return refuse(lifetime_error::already_open, key);
  rooms_.emplace(key, room_state{});
  emit(room_opened{key});
  // Older generations of this room can no longer open here: their tombstones are done.
  for (const room_key& old : before_open_.erase_older(key.room, key.generation)) {
    emit(tombstone_retired{old, key.generation});
    if (ended != nullptr) ended->push_back(old);
  }
  return done{};
}

status<lifetime_error> room_lifetimes::try_acquire(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) {
    return refuse(is_tombstoned(key) ? lifetime_error::room_closed : lifetime_error::unknown_room,
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

status<lifetime_error> room_lifetimes::close(room_key key, unopened_ends* ended) {
  return close_leaving(key, tombstone_table::before_open, ended);
}

status<lifetime_error> room_lifetimes::close_over(room_key key) {
  return close_leaving(key, tombstone_table::finished, nullptr);
}

status<lifetime_error> room_lifetimes::close_leaving(room_key key, tombstone_table unopened,
                                                     unopened_ends* ended) {
  const auto it = rooms_.find(key);
  if (it != rooms_.end()) {
    it->second.closed = true;
    emit(room_closed{key, it->second.pending_leases, false});
    return done{};
  }
  emit(room_closed{key, 0, true, unopened});
  if (is_tombstoned(key)) return done{};
  if (unopened == tombstone_table::finished) {
    (void)add_tombstone(finished_, unopened, key);
    return done{};
  }
  const std::optional<room_key> evicted = add_tombstone(before_open_, unopened, key);
  if (evicted && ended != nullptr) ended->push_back(*evicted);
  return done{};
}

status<lifetime_error> room_lifetimes::clear(room_key key) {
  const auto it = rooms_.find(key);
  if (it == rooms_.end()) return refuse(lifetime_error::unknown_room, key);
  if (it->second.pending_leases > 0) return refuse(lifetime_error::leases_pending, key);
  const bool was_closed = it->second.closed;
  rooms_.erase(it);
  emit(room_cleared{key});
  if (was_closed) add_tombstone(finished_, tombstone_table::finished, key);
  return done{};
}

bool room_lifetimes::is_admitting(room_key key) const {
  const auto it = rooms_.find(key);
  return it != rooms_.end() && !it->second.closed;
}

bool room_lifetimes::is_closed(room_key key) const {
  const auto it = rooms_.find(key);
  if (it != rooms_.end()) return it->second.closed;
  return is_tombstoned(key);
}

std::uint32_t room_lifetimes::pending_leases(room_key key) const {
  const auto it = rooms_.find(key);
  return it == rooms_.end() ? 0 : it->second.pending_leases;
}

// The decision that adds a tombstone is emitted first; an eviction it causes follows it.
std::optional<room_key> room_lifetimes::add_tombstone(bounded_key_set& table, tombstone_table which,
                                                      room_key key) {
  const std::optional<room_key> evicted = table.insert(key);
  if (evicted) emit(tombstone_evicted{*evicted, which});
  KVSIM_INVARIANT(table.contains(key), "a tombstone just added is in its table");
  return evicted;
}

status<lifetime_error> room_lifetimes::refuse(lifetime_error error, room_key key) {
  emit(lifetime_refused{error, key});
  return error;
}

void room_lifetimes::emit(event_body body) { sink_.emit_built(event{rank_, std::move(body)}); }

}  // namespace kvsim::core
