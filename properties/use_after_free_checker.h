#pragma once
// DOMAIN.md I1: no page is free or owned by another (room, generation) while a non-terminal
// transfer references it, as source or destination.
//
// Checked where it matters, at each page copy: when a transfer of request R copies source
// page s (rank a) into destination page d (rank b), both pages must be owned by R right
// then. A page that is free, or that was freed and handed to another request, is exactly the
// corruption of the seed change (DOMAIN.md B1, B3, B4, B12). The finding names the copy, the
// free and the re-allocation that prove it; its evidence is their event indices, in log order.
//
// It also reports ledger misuse (invariant "misuse"): the ledger refused a call that a correct
// protocol never makes (a double release, a lease on a page the caller does not own, ...).
// A refusal of a careless caller's call (between misuse_attempted and misuse_answered) is the
// point of that fault, not the core's misuse: misuse_checker judges it.
#include <cstddef>
#include <optional>

#include "core/ids.h"
#include "properties/page_ownership.h"
#include "properties/shared_page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class use_after_free_checker : public sim::checker {
 public:
  use_after_free_checker() = default;
  // Reads `shared`, which a page_ownership_feed attached after this checker feeds
  // (properties/shared_page_ownership.h).
  explicit use_after_free_checker(const page_ownership& shared) : ownership_(shared) {}

  const char* name() const override { return "use_after_free"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

  const page_ownership& ownership() const { return ownership_.view(); }

 private:
  std::optional<sim::finding> check_copy(const sim::transfer_page_copied& copy, std::uint64_t step,
                                         std::size_t index) const;

  ownership_source ownership_;
  std::optional<core::rank_id> careless_call_on_;  // a careless call is being answered there
};

}  // namespace kvsim::properties
