#pragma once
// DOMAIN.md I8, the books: at quiescence a rank's page ledger must say about itself what its
// events said it did. The world audits every ledger once all actors returned
// (sim::ledger_audited: its counts, owner_of, lease_count, is_retiring and pages_of for every
// page, and its own consistency check); this checker replays the ledger's events
// (page_ownership) and compares. A ledger whose accounting drifted from its decisions (it
// still counts a page its events freed, or lost a page no event freed) leaks or double-hands
// pages in the next request, even when this run's transfers never touched them again.
#include <cstddef>
#include <optional>

#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class ledger_audit_checker : public sim::checker {
 public:
  const char* name() const override { return "ledger_audit"; }
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  std::optional<sim::finding> compare(const sim::ledger_audited& audit, std::size_t index) const;

  page_ownership ownership_;
};

}  // namespace kvsim::properties
