#include "properties/free_list_replay.h"

#include <algorithm>

namespace kvsim::properties {

free_list_replay::free_list_replay(std::uint32_t pages_total, core::allocation_order order)
    : order_(order) {
  for (core::page_index page = 0; page < pages_total; ++page) {
    if (order == core::allocation_order::lifo) {
      free_.push_front(page);  // the back (taken first) ends up as page 0
    } else {
      free_.push_back(page);
    }
  }
}

core::page_index free_list_replay::handed_out(std::size_t i) const {
  return order_ == core::allocation_order::lifo ? free_[free_.size() - 1 - i] : free_[i];
}

std::vector<core::page_index> free_list_replay::next(std::uint32_t count) const {
  if (count > free_.size()) return {};
  std::vector<core::page_index> pages;
  for (std::uint32_t i = 0; i < count; ++i) {
    pages.push_back(handed_out(i));
  }
  return pages;
}

bool free_list_replay::hands_out(const std::vector<core::page_index>& pages) const {
  if (pages.size() > free_.size()) return false;  // next() is empty then, `pages` is not
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (pages[i] != handed_out(i)) return false;
  }
  return true;
}

void free_list_replay::taken(const std::vector<core::page_index>& pages) {
  for (const core::page_index page : pages) {
    const auto it = std::find(free_.begin(), free_.end(), page);
    if (it != free_.end()) free_.erase(it);
  }
}

}  // namespace kvsim::properties
