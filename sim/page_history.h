#pragma once
// The pages a finding is about, and what happened to each of them over the run, in the
// domain's terms (DOMAIN.md): who owned it when, who leased, freed, wrote and read it, and
// which transfers were still in flight when it was freed. The text and Perfetto timelines
// both tell a finding's story with it.
#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/actor_name.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

struct page_ref {
  core::rank_id rank = 0;
  core::page_index page = 0;
  bool host = false;  // a HiCache host page (the rank's host pool), not a KV page

  friend auto operator<=>(const page_ref&, const page_ref&) = default;
};

// "rank 1 page 3", "rank 0 host page 2".
std::string to_string(const page_ref& page);

// Every page `e` names: a ledger decision's pages on its rank, both ends of a transfer or a
// copy, a page written or read, a storage read's host pages, a careless call's pages.
std::vector<page_ref> pages_named(const sim_event& e);

// The pages a finding involves: every page its evidence events name, ascending. A finding
// carries no page list of its own, but its evidence is typed events, and those name pages.
// (Evidence that names a whole allocation names every page of it.)
std::vector<page_ref> finding_pages(const std::vector<sim_event>& events, const finding& found);

enum class ownership_change : std::uint8_t { none, acquired, released };

struct page_moment {
  std::size_t event = 0;  // index in the log
  ownership_change change = ownership_change::none;
  std::optional<core::room_key> owner;  // acquired: the new owner; released: the old one
  // What happened, without time or actor: "freed (was room 42/gen 0's) while r0.transfer.1
  // (room 42/gen 0) in flight", "written by r0.transfer.1 (room 42/gen 0) while room 42/gen 1
  // owns it".
  std::string what;
};

// What happened to `page`, in log order.
std::vector<page_moment> page_history(const std::vector<sim_event>& events, const page_ref& page);

}  // namespace kvsim::sim
