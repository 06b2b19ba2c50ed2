#include "sim/declaration_check.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "spec/rng.h"
#include "sim/step_log.h"

namespace kvsim::sim {
namespace {

// One decision as the check replays it: schedule decisions by the chosen thread's identity
// (ids may be renamed once two steps swap), fault and data decisions by their tag.
struct recorded_choice {
  decision_kind kind = decision_kind::schedule;
  std::uint64_t thread_or_tag = 0;
  std::uint32_t chosen = 0;
};

// Random over every decision (faults fire one time in sixteen, whatever the profile's
// rate: the profile of an exhaustive search says only which kinds may fire); records.
class random_recorder final : public strategy {
 public:
  explicit random_recorder(std::uint64_t seed) : random_(seed) {}
  std::string name() const override { return "declaration-check"; }
  bool wants_step_log() const override { return true; }
  std::uint32_t choose(const decision_request& request) override {
    std::uint32_t chosen = 0;
    if (request.kind == decision_kind::fault) {
      chosen = request.fault_per_million > 0 && random_.below(16) == 0 ? 1 : 0;
    } else {
      chosen = random_.below(request.options);
    }
    choices.push_back(recorded_choice{request.kind,
                                      request.kind == decision_kind::schedule ? request.threads[chosen]
                                                                              : request.tag,
                                      chosen});
    return chosen;
  }
  std::vector<recorded_choice> choices;

 private:
  spec::rng random_;
};

// Replays recorded choices, schedule decisions by identity; gives the run up at the first
// choice that does not fit (`unfit`).
class identity_replay final : public strategy {
 public:
  explicit identity_replay(std::vector<recorded_choice> choices) : choices_(std::move(choices)) {}
  std::string name() const override { return "declaration-check-replay"; }
  bool wants_step_log() const override { return true; }
  bool abandoned() const override { return unfit_.has_value(); }
  std::uint32_t choose(const decision_request& request) override {
    if (unfit_) return 0;
    if (next_ >= choices_.size()) {
      unfit_ = "the run asked for more decisions than the original took";
      return 0;
    }
    const recorded_choice& c = choices_[next_++];
    if (c.kind != request.kind) {
      unfit_ = "decision " + std::to_string(next_ - 1) + " is a " + to_string(request.kind) +
               " decision, was a " + to_string(c.kind) + " one";
      return 0;
    }
    if (c.kind != decision_kind::schedule) {
      if (c.thread_or_tag != request.tag || c.chosen >= request.options) {
        unfit_ = "decision " + std::to_string(next_ - 1) + " decides another thing";
        return 0;
      }
      return c.chosen;
    }
    for (std::uint32_t i = 0; i < request.options; ++i) {
      if (request.threads[i] == c.thread_or_tag) return i;
    }
    unfit_ = "decision " + std::to_string(next_ - 1) + ": the thread to run is not runnable";
    return 0;
  }
  const std::optional<std::string>& unfit() const { return unfit_; }
  std::size_t used() const { return next_; }

 private:
  std::vector<recorded_choice> choices_;
  std::size_t next_ = 0;
  std::optional<std::string> unfit_;
};

struct run_summary {
  std::uint64_t digest = 0;
  std::optional<std::string> finding;
  std::vector<step_record> steps;
  std::vector<std::uint64_t> prefixes;  // prefix_class_digests
};

}  // namespace

declaration_check_result check_declarations(const dpor_run_fn& run_once, std::uint64_t seed,
                                            std::uint64_t max_swaps) {
  declaration_check_result result;
  random_recorder recorder(seed);
  run_summary base;
  run_once(recorder, [&](const world& w) {
    base.digest = w.terminal_digest();
    if (w.found()) base.finding = w.found()->invariant;
    base.steps = w.steps_touched().steps();
    base.prefixes = prefix_class_digests(w);
  });
  if (base.finding) return result;  // a finding cuts the run where its checker fires
  // Decisions grouped by step: group k holds step k's schedule decision and what it decided
  // inside (its fault and data decisions).
  std::vector<std::pair<std::size_t, std::size_t>> groups;  // [begin, end) in choices
  for (std::size_t i = 0; i < recorder.choices.size(); ++i) {
    if (recorder.choices[i].kind == decision_kind::schedule) groups.push_back({i, i + 1});
    else if (!groups.empty()) groups.back().second = i + 1;
  }
  const std::size_t steps = std::min(groups.size(), base.steps.size());
  for (std::size_t k = 0; k + 1 < steps && result.swaps < max_swaps; ++k) {
    const step_record& a = base.steps[k];
    const step_record& b = base.steps[k + 1];
    if (a.thread == b.thread || b.after_fence || b.created_at == k + 1) continue;
    if (conflicts(a.accesses, b.accesses)) continue;
    std::vector<recorded_choice> swapped(recorder.choices.begin(),
                                         recorder.choices.begin() + static_cast<std::ptrdiff_t>(groups[k].first));
    for (std::size_t i = groups[k + 1].first; i < groups[k + 1].second; ++i) swapped.push_back(recorder.choices[i]);
    for (std::size_t i = groups[k].first; i < groups[k].second; ++i) swapped.push_back(recorder.choices[i]);
    swapped.insert(swapped.end(), recorder.choices.begin() + static_cast<std::ptrdiff_t>(groups[k + 1].second),
                   recorder.choices.end());
    identity_replay replay(std::move(swapped));
    run_summary other;
    run_once(replay, [&](const world& w) {
      other.digest = w.terminal_digest();
      if (w.found()) other.finding = w.found()->invariant;
      other.prefixes = prefix_class_digests(w);
    });
    const std::size_t swap_decision = groups[k].first;
    if (replay.unfit() && replay.used() <= swap_decision + 1) {
      ++result.skipped;  // the second step was not runnable before the first: not a swap
      continue;
    }
    ++result.swaps;
    std::string differs;
    if (replay.unfit()) differs = "the rest of the run changed (" + *replay.unfit() + ")";
    else if (other.finding) differs = "the swapped run found " + *other.finding;
    else if (other.digest != base.digest) differs = "the terminal state changed";
    // After the pair, both runs are in the same state by the digest of their prefixes (the
    // digest ignores the order of independent steps), and from there on they must continue
    // identically: every later prefix digest equal, the terminal state equal.
    else if (other.prefixes != base.prefixes && other.prefixes.size() == base.prefixes.size() &&
             !std::equal(other.prefixes.begin() + static_cast<std::ptrdiff_t>(k + 1), other.prefixes.end(),
                         base.prefixes.begin() + static_cast<std::ptrdiff_t>(k + 1))) {
      differs = "the state digests after the pair differ";
    } else if (other.prefixes.size() != base.prefixes.size()) {
      differs = "the run's length changed";
    }
    if (!differs.empty()) {
      result.violation = declaration_violation{
          k + 1, "steps " + std::to_string(k + 1) + " and " + std::to_string(k + 2) +
                     " declared nothing in common, yet swapping them: " + differs};
      return result;
    }
  }
  return result;
}

}  // namespace kvsim::sim
