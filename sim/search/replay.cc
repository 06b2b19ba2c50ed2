#include "sim/search/replay.h"

#include <algorithm>
#include <utility>

#include "sim/search/random_walk.h"

namespace kvsim::sim {

std::string describe(const decision& d) {
  return std::string(to_string(d.kind)) + " choosing " + std::to_string(d.chosen) + " of " +
         std::to_string(d.options) + " (subject " + std::to_string(d.subject) + ")";
}

std::string describe(const decision_request& request) {
  std::string text = std::string(to_string(request.kind)) + " among " +
                     std::to_string(request.options);
  if (request.kind == decision_kind::schedule) {
    text += " subjects [";
    for (std::size_t i = 0; i < request.subjects.size(); ++i) {
      if (i != 0) text += ",";
      text += std::to_string(request.subjects[i]);
    }
    text += "]";
  } else {
    text += " (tag " + std::to_string(request.tag) + ")";
  }
  return text;
}

replay::replay(std::vector<decision> recorded, replay_mode mode,
               std::unique_ptr<strategy> fallback)
    : recorded_(std::move(recorded)), mode_(mode), fallback_(std::move(fallback)) {
  // A lenient replay always has somewhere to go; seed 0 keeps it deterministic.
  if (mode_ == replay_mode::lenient && !fallback_) fallback_ = std::make_unique<random_walk>(0);
}

std::string replay::name() const {
  return mode_ == replay_mode::strict ? "replay:strict" : "replay:lenient+" + fallback_->name();
}

std::uint32_t replay::diverge(const decision_request& request, std::string expected) {
  if (mode_ == replay_mode::lenient) {
    on_fallback_ = true;
    return fallback_->choose(request);
  }
  if (!divergence_) divergence_ = divergence{next_, std::move(expected), describe(request)};
  return 0;  // any valid index: the world stops at once
}

std::uint32_t replay::choose(const decision_request& request) {
  if (on_fallback_) return fallback_->choose(request);
  if (divergence_) return 0;
  if (next_ >= recorded_.size()) {
    return diverge(request, "no more decisions (the trace has " +
                                std::to_string(recorded_.size()) + ")");
  }
  const decision& expected = recorded_[next_];
  if (expected.kind != request.kind || expected.options != request.options) {
    return diverge(request, describe(expected));
  }
  std::uint32_t chosen = expected.chosen;
  if (request.kind == decision_kind::schedule) {
    const auto it = std::find(request.subjects.begin(), request.subjects.end(), expected.subject);
    if (it == request.subjects.end()) return diverge(request, describe(expected));
    chosen = static_cast<std::uint32_t>(it - request.subjects.begin());
  } else if (expected.subject != request.tag || expected.chosen >= request.options) {
    return diverge(request, describe(expected));
  }
  ++next_;
  ++replayed_;
  return chosen;
}

void replay::on_run_end(std::uint64_t decisions_taken) {
  if (mode_ == replay_mode::strict && !divergence_ && decisions_taken < recorded_.size()) {
    divergence_ = divergence{decisions_taken, describe(recorded_[decisions_taken]),
                             "the run ended after " + std::to_string(decisions_taken) +
                                 " decisions"};
  }
}

}  // namespace kvsim::sim
