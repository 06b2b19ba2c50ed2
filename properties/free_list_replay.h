#pragma once
// A replay of one rank's free list: which pages its ledger must hand out next. The ledger
// frees to the back of its list and takes from the back (LIFO: the page freed last comes
// first, so a premature free shows in the very next request) or from the front (FIFO); a
// fresh pool hands out page 0 first either way. Following pages_allocated and page_freed
// from the world's ledger_created on, the replay says which pages an allocation must return:
// a ledger that hands out others keeps books that disagree with its own order.
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/page_ledger.h"

namespace kvsim::properties {

class free_list_replay {
 public:
  free_list_replay(std::uint32_t pages_total, core::allocation_order order);

  // The pages the next allocation of `count` must return, in order; empty when the list
  // holds fewer (the allocation must then be refused).
  std::vector<core::page_index> next(std::uint32_t count) const;
  // Whether an allocation returning `pages` is the one next(pages.size()) says, without
  // building that list (it is built only for a finding's words; this runs at every one).
  bool hands_out(const std::vector<core::page_index>& pages) const;
  // An allocation took `pages`: drop them from the list wherever they are (the check that
  // they were the right ones is the caller's).
  void taken(const std::vector<core::page_index>& pages);
  void freed(core::page_index page) { free_.push_back(page); }

 private:
  // The i-th page (from 0) the next allocation takes; i must be below the list's size.
  core::page_index handed_out(std::size_t i) const;

  core::allocation_order order_;
  std::deque<core::page_index> free_;  // front: taken first under FIFO; back: under LIFO
};

}  // namespace kvsim::properties
