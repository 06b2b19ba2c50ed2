#pragma once
// The one place decisions are made and recorded: asks the strategy, checks its answer, and
// appends the decision to the run's list.
#include <cstdint>
#include <vector>

#include "sim/decision.h"
#include "sim/strategy.h"

namespace kvsim::sim {

class decision_stream {
 public:
  explicit decision_stream(strategy& chooser) : strategy_(chooser) {}

  std::uint32_t decide(const decision_request& request);

  const std::vector<decision>& decisions() const { return decisions_; }
  strategy& chooser() { return strategy_; }
  const strategy& chooser() const { return strategy_; }

 private:
  strategy& strategy_;
  std::vector<decision> decisions_;
};

}  // namespace kvsim::sim
