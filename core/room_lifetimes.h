#pragma once
// Room lifetimes on a prefill rank: per (room, generation) whether the room is open, closed
// (aborted) and how many chunk leases are pending.
//
// A chunk is admitted with try_acquire before it is queued and released only after ALL of
// its sibling futures ended (DOMAIN.md B4). close() stops admission but keeps the leases, so
// the drain can still finish; clear() refuses while leases are pending. A close that comes
// before the open leaves a tombstone, and a late open of that (room, generation) is refused,
// so a sender created after the ABORT can never start writing (DOMAIN.md B10).
//
// Tombstone table: at most `tombstones_max` entries; when full, the oldest tombstone (first
// inserted) is evicted and a tombstone_evicted event is emitted. Size it above the number of
// aborts that can arrive within the longest delay between an ABORT and its sender's open;
// an open that arrives after its tombstone was evicted is admitted, and the event stream
// shows why.
#include <cstdint>
#include <deque>
#include <map>
#include <set>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/ports.h"
#include "core/result.h"

namespace kvsim::core {

class room_lifetimes {
 public:
  room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t tombstones_max);

  status<lifetime_error> open(room_key key);
  status<lifetime_error> try_acquire(room_key key);
  status<lifetime_error> release(room_key key);
  // Idempotent: a duplicated ABORT closes nothing twice. Closing an unknown room tombstones it.
  status<lifetime_error> close(room_key key);
  // Forgets a drained room; a closed one leaves a tombstone so its incarnation cannot reopen.
  status<lifetime_error> clear(room_key key);

  bool is_tracked(room_key key) const { return rooms_.contains(key); }
  bool is_admitting(room_key key) const;  // open and not closed
  bool is_closed(room_key key) const;     // closed, tracked or tombstoned
  bool is_tombstoned(room_key key) const { return tombstones_.contains(key); }
  std::uint32_t pending_leases(room_key key) const;
  std::uint32_t room_count() const { return static_cast<std::uint32_t>(rooms_.size()); }
  std::uint32_t tombstone_count() const { return static_cast<std::uint32_t>(tombstones_.size()); }
  std::uint32_t tombstones_max() const { return tombstones_max_; }

 private:
  struct room_state {
    bool closed = false;
    std::uint32_t pending_leases = 0;
  };

  void add_tombstone(room_key key);
  status<lifetime_error> refuse(lifetime_error error, room_key key);
  void emit(event_body body);

  rank_id rank_;
  event_sink& sink_;
  std::uint32_t tombstones_max_;
  std::map<room_key, room_state> rooms_;
  std::set<room_key> tombstones_;
  std::deque<room_key> tombstone_order_;  // insertion order: the eviction rule
};

}  // namespace kvsim::core
