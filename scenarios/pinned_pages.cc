#include "scenarios/pinned_pages.h"

namespace kvsim::scenarios {

std::optional<core::page_index> first_taken_page(const core::page_ledger& ledger,
                                                 std::span<const core::page_index> pages) {
  for (const core::page_index page : pages) {
    if (ledger.owner_of(page)) return page;
  }
  return std::nullopt;
}

std::string pinned_wait_text(const core::page_ledger& ledger, core::rank_id rank,
                             const core::room_key& key, core::page_index page) {
  std::string text = "pinned page " + std::to_string(page) + " for " + core::to_string(key);
  if (const auto owner = ledger.owner_of(page)) {
    text += " (still " + core::to_string(*owner) + "'s on rank " + std::to_string(rank) + ")";
  }
  return text;
}

}  // namespace kvsim::scenarios
