#pragma once
// Decode's look at its own ledger before a pinned allocation (request_pin::decode_pages): the
// world waits until every pinned page is free and only then calls allocate_exact, because a
// refused exact allocation is misuse, and the logged allocator handed a page out only once it
// was free.
#include <optional>
#include <span>
#include <string>

#include "core/ids.h"
#include "core/page_ledger.h"

namespace kvsim::scenarios {

// The first of `pages` that is not free (owned, retiring or quarantined); empty: all free.
std::optional<core::page_index> first_taken_page(const core::page_ledger& ledger,
                                                 std::span<const core::page_index> pages);

// What decode waits on, for the world's wait-for lines: "pinned page 5 for room 9/gen 0 (still
// room 7/gen 0's on rank 1)".
std::string pinned_wait_text(const core::page_ledger& ledger, core::rank_id rank,
                             const core::room_key& key, core::page_index page);

}  // namespace kvsim::scenarios
