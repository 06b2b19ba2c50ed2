#pragma once
// A forgiving replay for shrinking: it follows a recorded decision list where the recording
// still fits (same kind, and for schedule decisions a recorded subject that is still
// runnable) and otherwise takes the least disruptive choice: keep running the actor that ran
// last if it still can (no preemption), else the first option; no fault fires. Decisions
// listed in `calm` are taken that way even where the recording fits, which is how a shrinker
// removes one preemption or one fault at a time. It never diverges; it counts what it did.
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "sim/search/strategy.h"

namespace kvsim::sim {

class guided_replay final : public strategy {
 public:
  guided_replay(std::vector<decision> recorded, std::set<std::uint64_t> calm = {})
      : recorded_(std::move(recorded)), calm_(std::move(calm)) {}
  std::string name() const override { return "guided"; }
  std::uint32_t choose(const decision_request& request) override;

  // Schedule decisions that switched away from a still-runnable last actor.
  std::uint64_t preemptions() const { return preemptions_; }
  // Indices (in this run) of those decisions, so a shrinker can try to calm each.
  const std::vector<std::uint64_t>& preemption_points() const { return preemption_points_; }

 private:
  std::uint32_t calm_choice(const decision_request& request) const;

  std::vector<decision> recorded_;
  std::set<std::uint64_t> calm_;
  std::uint64_t next_ = 0;
  std::optional<std::uint64_t> last_actor_;
  std::uint64_t preemptions_ = 0;
  std::vector<std::uint64_t> preemption_points_;
};

}  // namespace kvsim::sim
