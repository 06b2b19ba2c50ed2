#include "sim/search/guided_replay.h"

#include <algorithm>

namespace kvsim::sim {

std::uint32_t guided_replay::calm_choice(const decision_request& request) const {
  if (request.kind != decision_kind::schedule) return 0;  // no fault, first data option
  if (last_actor_) {
    const auto it = std::find(request.subjects.begin(), request.subjects.end(), *last_actor_);
    if (it != request.subjects.end()) return static_cast<std::uint32_t>(it - request.subjects.begin());
  }
  return 0;
}

std::uint32_t guided_replay::choose(const decision_request& request) {
  const std::uint64_t index = next_++;
  std::uint32_t chosen = calm_choice(request);
  if (index < recorded_.size() && !calm_.contains(index)) {
    const decision& recorded = recorded_[index];
    if (recorded.kind == request.kind) {
      if (request.kind == decision_kind::schedule) {
        const auto it = std::find(request.subjects.begin(), request.subjects.end(), recorded.subject);
        if (it != request.subjects.end()) {
          chosen = static_cast<std::uint32_t>(it - request.subjects.begin());
        }
      } else if (recorded.chosen < request.options) {
        chosen = recorded.chosen;
      }
    }
  }
  if (request.kind == decision_kind::schedule && chosen < request.subjects.size()) {
    const std::uint64_t subject = request.subjects[chosen];
    if ((subject & delivery_bit) == 0) {
      if (last_actor_ && subject != *last_actor_ &&
          std::find(request.subjects.begin(), request.subjects.end(), *last_actor_) !=
              request.subjects.end()) {
        ++preemptions_;
        preemption_points_.push_back(index);
      }
      last_actor_ = subject;
    }
  }
  return chosen;
}

}  // namespace kvsim::sim
