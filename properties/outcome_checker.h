#pragma once
// DOMAIN.md I9, the outcome half: a request ends in failure only for a reason.
//
// "Every request finishes" is not enough: a core that refuses every open, or fails every
// transfer, finishes every request at once, as aborted. What a serving engine loses there is
// the request itself, so a request_finished of k on rank r whose outcome is not `succeeded`
// fires unless an earlier event gave it a cause:
//   - of k itself: an abort armed by decode (the client's abort, or decode reacting to a
//     failed status), an injected prefill failure, an expired deadline, a lost peer the
//     request waited for, a transfer of k that failed, timed out or stayed unconfirmed, or
//     pages the ledger refused to allocate for it;
//   - of the run: a fault that can delay or break any request (message delay, duplication or
//     loss, a stalled or failed transfer, a peer's death). The adversary's replayed and
//     forged messages are no cause: a correct core refuses them, so they must not fail a
//     request either; nor is the `abort` fault, which only times the scenario's own aborts.
// Evidence: the offending request_finished and the first event that started the request on
// that rank (its pages, its open, or its abort).
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class outcome_checker : public sim::checker {
 public:
  const char* name() const override { return "outcome"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;

  void note_core(const core::event& e, event_mark at);
  std::optional<sim::finding> check_finish(const core::request_finished& finished,
                                           core::rank_id rank, event_mark at) const;

  std::set<core::room_key> caused_;          // requests something gave a reason to fail
  bool run_faulted_ = false;                 // a fault that may fail any request fired
  std::map<rank_room, event_mark> started_;  // first event of each request on each rank
};

}  // namespace kvsim::properties
