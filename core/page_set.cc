#include "core/page_set.h"

#include <algorithm>

#include "core/invariant.h"

namespace kvsim::core {

void page_set::add(page_index page) {
  const auto at = std::lower_bound(pages_.begin(), pages_.end(), page);
  KVSIM_INVARIANT(at == pages_.end() || *at != page, "a page joins its owner's pages once");
  pages_.insert(at, page);
}

void page_set::remove(page_index page) {
  const auto at = std::lower_bound(pages_.begin(), pages_.end(), page);
  KVSIM_INVARIANT(at != pages_.end() && *at == page, "a page leaves only the owner that holds it");
  pages_.erase(at);
}

}  // namespace kvsim::core
