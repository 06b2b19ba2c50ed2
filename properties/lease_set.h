#pragma once
// The leases that name one page, as a set kept sorted in place. A page is named by one or two
// leases at a time (a chunk's source or destination lease, sometimes a quarantined one
// beside it), so two ids live inline and a std::set's tree node per insert, which a search
// paid on every lease of every run, is gone (docs/performance.md).
#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstddef>

#include "core/ids.h"

namespace kvsim::properties {

class lease_set {
 public:
  using const_iterator = const core::lease_id*;

  // Adds `lease`; false when it was already there (as std::set::insert's second).
  bool insert(core::lease_id lease) {
    const auto at = std::lower_bound(ids_.begin(), ids_.end(), lease);
    if (at != ids_.end() && *at == lease) return false;
    ids_.insert(at, lease);
    return true;
  }
  // Removes `lease`; how many were removed (0 or 1, as std::set::erase).
  std::size_t erase(core::lease_id lease) {
    const auto at = std::lower_bound(ids_.begin(), ids_.end(), lease);
    if (at == ids_.end() || *at != lease) return 0;
    ids_.erase(at);
    return 1;
  }
  bool contains(core::lease_id lease) const {
    return std::binary_search(ids_.begin(), ids_.end(), lease);
  }
  bool empty() const { return ids_.empty(); }
  std::size_t size() const { return ids_.size(); }
  // Ascending, as a std::set iterates.
  const_iterator begin() const { return ids_.data(); }
  const_iterator end() const { return ids_.data() + ids_.size(); }

  friend bool operator==(const lease_set& a, const lease_set& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  boost::container::small_vector<core::lease_id, 2> ids_;
};

}  // namespace kvsim::properties
