#pragma once
// The one place decisions are made and recorded: asks the strategy, checks its answer, and
// appends the decision to the run's list.
#include <cstdint>
#include <vector>

#include "sim/decision.h"
#include "sim/search/strategy.h"

namespace kvsim::sim {

class decision_stream {
 public:
  explicit decision_stream(strategy& chooser) : strategy_(chooser) {}

  std::uint32_t decide(const decision_request& request);
  // A schedule decision whose request lists no subjects (a strategy that does not read
  // them): `subject_at(chosen)` names the chosen option for the record.
  template <class SubjectAt>
  std::uint32_t decide_counted(const decision_request& request, SubjectAt&& subject_at) {
    const std::uint32_t chosen = ask(request);
    decisions_.push_back(decision{request.kind, request.options, chosen, subject_at(chosen)});
    return chosen;
  }

  const std::vector<decision>& decisions() const { return decisions_; }
  strategy& chooser() { return strategy_; }
  const strategy& chooser() const { return strategy_; }

 private:
  // The strategy's answer, checked.
  std::uint32_t ask(const decision_request& request);

  strategy& strategy_;
  std::vector<decision> decisions_;
};

}  // namespace kvsim::sim
