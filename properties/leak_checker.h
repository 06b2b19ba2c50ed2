#pragma once
// DOMAIN.md I8: at quiescence nothing leaks: every page free, every lease zero.
//
// observe() only replays the ledger; at_quiescence() reports, per rank, the pages still owned
// (grouped by owner) and the leases still active, quarantined ones separately: a quarantine
// the transport never confirmed keeps its pages out of circulation forever, which is a leak
// too. The evidence is the allocation of every leaked page and the start of every leaked
// lease, in log order; one details line per leaked page or lease says how it was left.
// What the world's audit at quiescence (sim::core_audited) says a core component still holds
// (a room a sender never forgot, a status kept, a request decode never finished) leaks too.
// A rank that stopped (peer death, sim rank_stopped) is not judged: its memory went with it.
// The survivors are, and a quarantine they hold for a dead peer must have been confirmed.
#include <cstddef>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "properties/page_ownership.h"
#include "properties/shared_page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class leak_checker : public sim::checker {
 public:
  leak_checker() = default;
  // Reads `shared`, which a page_ownership_feed attached after this checker feeds
  // (properties/shared_page_ownership.h).
  explicit leak_checker(const page_ownership& shared) : ownership_(shared) {}

  const char* name() const override { return "leak"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;
  std::optional<sim::finding> at_quiescence() override;

  const page_ownership& ownership() const { return ownership_.view(); }

 private:
  ownership_source ownership_;
  std::vector<std::pair<std::size_t, sim::core_audited>> held_;  // audits that hold something
  std::set<core::rank_id> stopped_;
};

}  // namespace kvsim::properties
