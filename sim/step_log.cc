#include "sim/step_log.h"

#include <algorithm>

namespace kvsim::sim {

bool conflicts(const std::vector<object_access>& a, const std::vector<object_access>& b) {
  // Both sorted by object: one merge pass.
  auto x = a.begin();
  auto y = b.begin();
  while (x != a.end() && y != b.end()) {
    if (x->object < y->object) {
      ++x;
    } else if (y->object < x->object) {
      ++y;
    } else {
      if (x->mode == access::write || y->mode == access::write || x->mode != y->mode) return true;
      ++x;
      ++y;
    }
  }
  return false;
}

void step_log::begin_step(std::uint64_t thread, std::uint64_t subject, std::uint64_t created_at,
                          bool after_fence) {
  steps_.push_back(step_record{thread, subject, created_at, after_fence, {}});
}

void step_log::touch(std::uint64_t object, access mode, bool wake) {
  if (steps_.empty()) return;  // setup: before any step, nothing to order
  std::vector<object_access>& list = steps_.back().accesses;
  const auto at = std::lower_bound(list.begin(), list.end(), object,
                                   [](const object_access& e, std::uint64_t o) { return e.object < o; });
  if (at != list.end() && at->object == object) {
    at->mode = combined(at->mode, mode);
    at->wake = at->wake || wake;
    return;
  }
  list.insert(at, object_access{object, mode, wake});
}

}  // namespace kvsim::sim
