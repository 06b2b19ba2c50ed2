#pragma once
// Room lifetimes on a prefill rank: per (room, generation) whether the room is open, closed
// (aborted) and how many chunk leases are pending.
//
// A chunk is admitted with try_acquire before it is queued and released only after ALL of
// its sibling futures ended (DOMAIN.md B4). close() stops admission but keeps the leases, so
// the drain can still finish; clear() refuses while leases are pending.
//
// Tombstones live in two tables, each with one purpose, so that one never crowds out the
// other (before, one table held both, and ordinary abort traffic evicted the tombstones that
// stop a late sender):
//   - before_open: a close (an ABORT) of a (room, generation) this rank has not opened. It
//     refuses that generation's late open, so a sender created after the ABORT can never
//     start writing (DOMAIN.md B10). It lives until that open comes (refused; the tombstone
//     moves to `finished`), or until a newer generation of the same room opens here, after
//     which the old one can no longer arrive (the caller's contract: a rank opens the
//     generations of one room in increasing order, as a scheduler that serves a reused room
//     id only after its previous request does). Aborts of rooms that are open never add one.
//   - finished: an aborted incarnation that is over (a closed room cleared, or a before-open
//     tombstone whose open came). It refuses a reopen of that incarnation and keeps
//     is_closed true for late calls about it; losing one loses only that misuse guard.
// Both are bounded (constructor): when one is full, its oldest tombstone is evicted, with a
// tombstone_evicted event naming the table. Size before_open above the number of ABORTs that
// can arrive for requests this rank has not opened yet within the longest delay between an
// ABORT and its sender's open: an open that comes after its tombstone was evicted is
// admitted, and the event stream shows why. Every operation is O(log n) in the rooms and
// tombstones held; nothing grows with the number of requests ever served.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/bounded_key_set.h"
#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/ports.h"
#include "core/result.h"

namespace kvsim::core {

class room_lifetimes {
 public:
  // Both tombstone tables hold up to `tombstones_max`.
  room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t tombstones_max);
  room_lifetimes(rank_id rank, event_sink& sink, std::uint32_t before_open_max,
                 std::uint32_t finished_max);

  // The (room, generation)s whose before-open tombstones one call ended without their open:
  // retired (a newer generation of the room opened here) or evicted (the table was full). A
  // request aborted before it reached this rank (an engine that drops it at admission) never
  // opens, so whatever the caller remembers of its ABORTs has to end here, with its tombstone
  // (prefill_sender forgets their tokens), or it would outlive every table of the room.
  using unopened_ends = std::vector<room_key>;

  // `ended`, when given, receives the before-open tombstones this call ended unopened.
  status<lifetime_error> open(room_key key, unopened_ends* ended = nullptr);
  status<lifetime_error> try_acquire(room_key key);
  status<lifetime_error> release(room_key key);
  // Idempotent: a duplicated ABORT closes nothing twice. Closing an unknown room tombstones it;
  // `ended` as for open().
  status<lifetime_error> close(room_key key, unopened_ends* ended = nullptr);
  // The close of a (room, generation) the caller knows is over here (its open came and went,
  // and its memory is retired): idempotent like close(), but a tombstone it leaves goes to
  // `finished`. Its open will not come again, so it must never take the place of a before-open
  // tombstone that stops a late sender (a replayed ABORT of a finished room would otherwise
  // evict one).
  status<lifetime_error> close_over(room_key key);
  // Forgets a drained room; a closed one leaves a finished tombstone so its incarnation
  // cannot reopen.
  status<lifetime_error> clear(room_key key);

  bool is_tracked(room_key key) const { return rooms_.contains(key); }
  bool is_admitting(room_key key) const;  // open and not closed
  bool is_closed(room_key key) const;     // closed, tracked or tombstoned
  bool is_tombstoned(room_key key) const {
    return before_open_.contains(key) || finished_.contains(key);
  }
  bool is_tombstoned_before_open(room_key key) const { return before_open_.contains(key); }
  std::uint32_t pending_leases(room_key key) const;
  std::uint32_t room_count() const { return static_cast<std::uint32_t>(rooms_.size()); }
  // The before-open table: the tombstones that stop late senders.
  std::uint32_t tombstone_count() const { return before_open_.size(); }
  std::uint32_t tombstones_max() const { return before_open_.capacity(); }
  std::uint32_t finished_count() const { return finished_.size(); }
  std::uint32_t finished_max() const { return finished_.capacity(); }

 private:
  struct room_state {
    bool closed = false;
    std::uint32_t pending_leases = 0;
  };

  // close and close_over: an open room is closed; an unopened one leaves a tombstone in the
  // table `unopened` names, unless it has one already.
  status<lifetime_error> close_leaving(room_key key, tombstone_table unopened, unopened_ends* ended);
  // Returns the tombstone evicted to make room, if any.
  std::optional<room_key> add_tombstone(bounded_key_set& table, tombstone_table which, room_key key);
  status<lifetime_error> refuse(lifetime_error error, room_key key);
  void emit(event_body body);

  rank_id rank_;
  event_sink& sink_;
  std::map<room_key, room_state> rooms_;
  bounded_key_set before_open_;
  bounded_key_set finished_;
};

}  // namespace kvsim::core
