#pragma once
// A replay of the core's page-ledger decisions, per rank: who owns each page now, which
// leases still reference it, and where (step and event index) it was last allocated and last
// freed, so that a finding can name the events that prove it. The checkers build on it; it
// judges nothing itself.
//
// It is a replay, not a model: it believes the ledger's events (a page is free when a
// page_freed says so, never because a release "should" have freed it), so a broken ledger
// shows up here exactly as it behaved. Pages a ledger never named are free and have no
// history. Pages and ranks are kept in dense_index_maps (slots by index, iterated in
// ascending order) and leases in ordered maps, so that iteration, and so every message built
// from it, is deterministic.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"
#include "core/ids.h"
#include "properties/dense_index_map.h"
#include "properties/lease_set.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

using core::pages_text;

// Where an event sits in a run: its schedule step and its position in the event log.
struct event_mark {
  std::uint64_t step = 0;
  std::size_t index = 0;

  friend bool operator==(const event_mark&, const event_mark&) = default;
};

// A page changing hands: allocated to `owner`, or freed from `owner`.
struct ownership_change {
  event_mark at;
  core::room_key owner;

  friend bool operator==(const ownership_change&, const ownership_change&) = default;
};

struct page_view {
  std::optional<core::room_key> owner;  // empty: free
  bool retiring = false;                // owner asked to release; waits for its leases
  lease_set leases;                     // active leases naming the page, quarantined included
  std::optional<ownership_change> last_allocated;
  std::optional<ownership_change> last_freed;
};

struct lease_view {
  core::room_key owner;
  core::lease_role role = core::lease_role::source;
  std::vector<core::page_index> pages;
  bool quarantined = false;
  event_mark started;
  std::optional<event_mark> quarantined_at;
};

struct rank_view {
  dense_index_map<core::page_index, page_view> pages;  // every page a ledger event ever named
  std::map<core::lease_id, lease_view> leases;  // active leases (quarantined ones included)
};

class page_ownership {
 public:
  // Replays `e` when it wraps a ledger decision; every other event leaves the view as it is.
  void observe(const sim::sim_event& e, std::size_t index);
  void apply(const core::event& e, event_mark at);
  // The decisions apply() replays: a checker built on the view subscribes to them.
  static sim::event_kinds kinds();

  // A page no ledger event named reads as free, with no history.
  const page_view& page(core::rank_id rank, core::page_index page) const;
  std::optional<core::room_key> owner_of(core::rank_id rank, core::page_index page) const;
  // Ranks in ascending order; a rank appears once any ledger event of it was replayed.
  using rank_views = dense_index_map<core::rank_id, rank_view>;
  const rank_views& ranks() const { return ranks_; }

 private:
  struct replayer;

  rank_views ranks_;
  page_view never_named_;
};

// "[3,4]": the page list form that core::describe uses too.


}  // namespace kvsim::properties
