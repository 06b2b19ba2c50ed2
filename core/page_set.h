#pragma once
// The pages one owner holds on a rank: a sorted vector, not a std::set. An owner holds a
// request's few pages; the ledger names them at every allocation, release and free, and a
// tree paid a node (an allocation) per page for that (docs/performance.md). Iteration is in
// ascending page order, as std::set's was, so everything built from it reads the same.
// Membership is asked with std::binary_search over begin()..end() (only the ledger's own
// consistency check asks).
// (Its code is in page_set.cc, where tools/mutate.sh mutates it with the rest of the core.)
#include <cstddef>
#include <vector>

#include "core/ids.h"

namespace kvsim::core {

class page_set {
 public:
  using const_iterator = std::vector<page_index>::const_iterator;

  // A page the owner did not hold joins (the ledger hands out free pages only: a page already
  // here is a broken ledger, and an invariant stops it).
  void add(page_index page);
  // A page the owner held leaves (likewise an invariant when it was not here).
  void remove(page_index page);
  void reserve(std::size_t pages) { pages_.reserve(pages); }
  bool empty() const { return pages_.empty(); }
  std::size_t size() const { return pages_.size(); }
  const_iterator begin() const { return pages_.begin(); }
  const_iterator end() const { return pages_.end(); }

 private:
  std::vector<page_index> pages_;  // ascending, no duplicates
};

}  // namespace kvsim::core
