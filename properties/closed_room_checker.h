#pragma once
// DOMAIN.md I4: a closed room never admits a chunk; status never leaves Failed.
//
// A chunk_admitted of request k on rank r after a room_closed of k on r (tombstone or not)
// fires: admission after the ABORT is how a chunk writes pages decode already freed
// (DOMAIN.md B9, B10). A closed room stays closed for good: a request's (room, generation)
// never comes back, so neither a clear nor an evicted tombstone reopens it. So does one
// after a change of k's status to Failed on r with no close: a failure (fail(), a failed or
// unconfirmed transfer, an accepted ABORT) closes admission as it fails the request.
//
// A status_changed of k on r fires when it leaves Failed: when the change says it came from
// Failed, and also when the events show k was Failed on r whatever the change says it came
// from (a cleared status that comes back is the same request leaving Failed). A change
// into Failed never fires here, not even a second one.
// Across ranks, one Failed rank fails the request (DOMAIN.md: ranks agree by MIN): a decode
// rank that releases a request as completed after a prefill rank failed it on its own (the
// world's failure_injected, which a core ignoring the failure cannot hide) fires too. Only
// injected failures count: a rank that fails a request because decode aborted it may do so
// after another decode rank legitimately took a finished transfer.
// Evidence: the close, the change to Failed or the injected failure, and the offending event.
#include <cstddef>
#include <map>
#include <optional>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class closed_room_checker : public sim::checker {
 public:
  const char* name() const override { return "closed_room"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;

  struct closing {
    event_mark at;
    bool before_open = false;  // the close left a before-open tombstone
  };

  std::optional<sim::finding> check_status(const core::status_changed& change, core::rank_id rank,
                                           event_mark at);
  std::optional<sim::finding> check_admission_after_failed(const core::chunk_admitted& admitted,
                                                           core::rank_id rank, event_mark at) const;

  std::map<rank_room, closing> closed_;           // first close of each room
  std::map<rank_room, event_mark> failed_since_;  // first change to Failed of each room
  std::map<core::room_key, std::pair<core::rank_id, event_mark>> injected_;  // first per request
};

}  // namespace kvsim::properties
