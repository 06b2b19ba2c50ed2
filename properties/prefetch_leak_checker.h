#pragma once
// DOMAIN.md I8 for HiCache: at quiescence a rank holds nothing of a prefetch any more: no
// prefetch entry (prefetch_registered .. prefetch_erased), no prefetch lock
// (prefetch_lock_taken .. prefetch_lock_released) and no host page (host_pages_allocated ..
// host_pages_freed). A prefetch left behind pins its host pages in the pool forever, the way
// a leaked page pins the KV pool (leak_checker.h). One finding lists every rank's leftovers,
// per request; the evidence is the event that took each thing, details one line per thing.
#include <cstddef>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class prefetch_leak_checker : public sim::checker {
 public:
  const char* name() const override { return "prefetch_leak"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;
  std::optional<sim::finding> at_quiescence() override;

 private:
  using rank_request = std::pair<core::rank_id, core::room_key>;

  struct held {
    std::optional<event_mark> entry;
    std::optional<event_mark> lock;
    std::map<core::page_index, event_mark> host_pages;
    bool empty() const { return !entry && !lock && host_pages.empty(); }
  };

  std::map<rank_request, held> held_;  // ordered: deterministic findings
};

}  // namespace kvsim::properties
