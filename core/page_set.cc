#include "core/page_set.h"

#include <algorithm>

namespace kvsim::core {

bool page_set::insert(page_index page) {
  const auto at = std::lower_bound(pages_.begin(), pages_.end(), page);
  if (at != pages_.end() && *at == page) return false;
  pages_.insert(at, page);
  return true;
}

std::size_t page_set::erase(page_index page) {
  const auto at = std::lower_bound(pages_.begin(), pages_.end(), page);
  if (at == pages_.end() || *at != page) return 0;
  pages_.erase(at);
  return 1;
}

bool page_set::contains(page_index page) const {
  return std::binary_search(pages_.begin(), pages_.end(), page);
}

}  // namespace kvsim::core
