#pragma once
// PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte,
// "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010).
// Every schedulable subject (actor or delivery) gets a random distinct priority of at least
// `depth` when first seen; the highest-priority runnable subject always runs. d-1 change
// points are drawn uniformly over the first `steps_estimate` schedule steps; at the i-th,
// the subject that would run drops to priority i (below every initial priority). A bug of
// depth d among n subjects and k steps is then found with probability at least
// 1/(n * k^(d-1)) per run. Fault and data choices are drawn like the random walk's.
#include <cstdint>
#include <map>
#include <vector>

#include "spec/rng.h"
#include "sim/search/strategy.h"

namespace kvsim::sim {

class pct final : public strategy {
 public:
  pct(std::uint64_t seed, std::uint32_t depth, std::uint64_t steps_estimate);
  std::string name() const override { return "pct:" + std::to_string(depth_); }
  std::uint32_t choose(const decision_request& request) override;

 private:
  std::uint64_t priority_of(std::uint64_t subject);

  spec::rng random_;
  std::uint32_t depth_;
  std::vector<std::uint64_t> change_points_;      // ascending schedule-step numbers
  std::map<std::uint64_t, std::uint64_t> priority_;  // subject -> priority (ordered: deterministic)
};

}  // namespace kvsim::sim
