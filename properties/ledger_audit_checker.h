#pragma once
// DOMAIN.md I8, the books: a rank's page ledger must say about itself what its events said it
// did. The world audits every ledger once all actors returned, and mid-run whenever its
// monitor looks (sim::ledger_audited: its counts, owner_of, lease_count, is_retiring and
// pages_of for every page and for pages past the pool, and its own consistency check); this
// checker replays the ledger's events (page_ownership) and compares. A ledger whose
// accounting drifted from its decisions (it still counts a page its events freed, or lost a
// page no event freed) leaks or double-hands pages in the next request, even when this run's
// transfers never touched them again.
//
// The events must also agree with each other as they happen:
//   - an allocation returns the pages the free list hands out next (free_list_replay, from
//     the world's ledger_created): a ledger that takes others has lost its own order, and
//     LIFO is what makes a premature free show in the very next request;
//   - a quarantined lease ends only by the transport's confirmation (quarantine_confirmed),
//     a plain one only plainly (lease_ended): the other way round, the ledger lost track of
//     which pages the transport may still touch.
#include <cstddef>
#include <map>
#include <optional>

#include "properties/dense_index_map.h"
#include "properties/free_list_replay.h"
#include "properties/page_ownership.h"
#include "properties/shared_page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class ledger_audit_checker : public sim::checker {
 public:
  ledger_audit_checker() = default;
  // Reads `shared`, which a page_ownership_feed attached after this checker feeds
  // (properties/shared_page_ownership.h).
  explicit ledger_audit_checker(const page_ownership& shared) : ownership_(shared) {}

  const char* name() const override { return "ledger_audit"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  std::optional<sim::finding> compare(const sim::ledger_audited& audit, std::uint64_t step,
                                      std::size_t index) const;
  // Before the event is replayed: whether the ledger's decision fits its history.
  std::optional<sim::finding> check_decision(const core::event& e, std::uint64_t step,
                                             std::size_t index);

  ownership_source ownership_;
  // Empty until the rank's ledger_created; every ledger decision looks its rank's up.
  dense_index_map<core::rank_id, std::optional<free_list_replay>> free_lists_;
};

}  // namespace kvsim::properties
