#include "sim/search/pct.h"

#include <algorithm>

namespace kvsim::sim {

pct::pct(std::uint64_t seed, std::uint32_t depth, std::uint64_t steps_estimate)
    : random_(seed), depth_(depth == 0 ? 1 : depth) {
  const std::uint64_t span = std::max<std::uint64_t>(steps_estimate, 1);
  for (std::uint32_t i = 1; i < depth_; ++i) {
    change_points_.push_back(1 + (random_.next() % span));
  }
  std::sort(change_points_.begin(), change_points_.end());
}

std::uint64_t pct::priority_of(std::uint64_t subject) {
  auto it = priority_.find(subject);
  if (it == priority_.end()) {
    // Initial priorities live above every change-point priority (1..depth-1). The low bits
    // carry the subject so that two subjects never tie.
    const std::uint64_t random_high = (random_.next() >> 24) << 24;
    it = priority_.emplace(subject, depth_ + random_high + (subject & 0xffffff)).first;
  }
  return it->second;
}

std::uint32_t pct::choose(const decision_request& request) {
  if (request.kind == decision_kind::fault) {
    return random_.chance(request.fault_per_million) ? 1u : 0u;
  }
  if (request.kind == decision_kind::data) return random_.below(request.options);

  const auto highest = [&]() {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < request.options; ++i) {
      if (priority_of(request.subjects[i]) > priority_of(request.subjects[best])) best = i;
    }
    return best;
  };
  std::uint32_t chosen = highest();
  // request.step counts the schedule decisions already taken; this one is step + 1.
  const std::uint64_t this_step = request.step + 1;
  for (std::size_t i = 0; i < change_points_.size(); ++i) {
    if (change_points_[i] == this_step) {
      priority_[request.subjects[chosen]] = i + 1;
      chosen = highest();
    }
  }
  return chosen;
}

}  // namespace kvsim::sim
