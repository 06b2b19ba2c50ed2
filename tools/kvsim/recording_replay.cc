#include "tools/kvsim/recording_replay.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/rng.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {
namespace {

// Each decision tries every option with up to `lookahead` more below it, each a whole run:
// about decisions x options^(lookahead+1) runs of a few decisions each. This caps it for a
// long recording (page42: 350-1,000 runs, under 0.15 s; past the cap the walk decides).
constexpr std::uint64_t runs_max = 20'000;
// Steerings with differently seeded walks before giving up on the recorded finding.
constexpr std::uint64_t attempts_max = 8;

// Takes the chosen index of each decision in `prefix`, then continues calmly: the actor that
// ran last if it still can, no fault, the first data option (as sim::guided_replay does once
// its recording ends). Notes each decision's kind and options for the steering.
class steered final : public sim::strategy {
 public:
  explicit steered(const std::vector<std::uint32_t>& prefix) : prefix_(prefix) {}
  std::string name() const override { return "replay-lenient"; }

  std::uint32_t choose(const sim::decision_request& request) override {
    const std::size_t index = asked_.size();
    asked_.push_back({request.kind, request.options});
    std::uint32_t chosen = calm(request);
    if (index < prefix_.size() && prefix_[index] < request.options) chosen = prefix_[index];
    if (request.kind == sim::decision_kind::schedule &&
        (request.subjects[chosen] & sim::delivery_bit) == 0) {
      last_actor_ = request.subjects[chosen];
    }
    return chosen;
  }

  struct asked {
    sim::decision_kind kind;
    std::uint32_t options;
  };
  const std::vector<asked>& requests() const { return asked_; }

 private:
  std::uint32_t calm(const sim::decision_request& request) const {
    if (request.kind != sim::decision_kind::schedule || !last_actor_) return 0;
    const auto it = std::find(request.subjects.begin(), request.subjects.end(), *last_actor_);
    return it == request.subjects.end() ? 0
                                        : static_cast<std::uint32_t>(it - request.subjects.begin());
  }

  const std::vector<std::uint32_t>& prefix_;
  std::vector<asked> asked_;
  std::optional<std::uint64_t> last_actor_;
};

struct trial {
  std::vector<steered::asked> requests;
  std::optional<sim::finding> found;
  order_fit fit;
};

// Chooses a run's decisions one at a time. Each option of the next decision is judged by the
// best run found below it within `lookahead` more decisions (each such run continued calmly
// to its end): a recorded order often needs two or three decisions in a row (deliver the
// ABORT, then run the actor that handles it) before it shows in the core's decisions.
class steering {
 public:
  steering(const run_setup& setup, std::vector<std::string> recorded,
           std::optional<sim::finding> recorded_finding, std::uint64_t seed,
           std::uint64_t budget_runs)
      : setup_(setup),
        recorded_(std::move(recorded)),
        recorded_finding_(std::move(recorded_finding)),
        walk_(seed),
        budget_runs_(budget_runs) {}

  std::vector<std::uint32_t> choose_all(bool follow) {
    std::vector<std::uint32_t> prefix;
    trial current = attempt(prefix);
    while (prefix.size() < current.requests.size()) {
      const steered::asked next = current.requests[prefix.size()];
      if (next.kind == sim::decision_kind::fault || next.options < 2) {
        prefix.push_back(0);  // no fault; a decision with one option
        continue;
      }
      if (!follow || runs_ >= budget_runs_) {
        if (follow) within_budget_ = false;
        prefix.push_back(walk_.below(next.options));
        current = attempt(prefix);
        continue;
      }
      std::vector<trial> below;
      for (std::uint32_t option = 0; option < next.options; ++option) {
        prefix.push_back(option);
        below.push_back(best_below(prefix, lookahead));
        prefix.pop_back();
      }
      std::vector<std::uint32_t> best{0};
      for (std::uint32_t option = 1; option < next.options; ++option) {
        if (better(below[option], below[best.front()])) {
          best = {option};
        } else if (!better(below[best.front()], below[option])) {
          best.push_back(option);
        }
      }
      // What the recording cannot tell apart, the seeded walk draws.
      prefix.push_back(best.size() == 1
                           ? best.front()
                           : best[walk_.below(static_cast<std::uint32_t>(best.size()))]);
      current = attempt(prefix);
    }
    return prefix;
  }

  const std::vector<std::string>& recorded() const { return recorded_; }
  std::uint64_t runs() const { return runs_; }
  bool within_budget() const { return within_budget_; }

 private:
  static constexpr int lookahead = 3;

  trial attempt(const std::vector<std::uint32_t>& prefix) {
    steered chooser(prefix);
    trial t;
    run_inspecting(setup_, chooser, [&](const sim::world& world, const sim::run_outcome&) {
      t.found = world.found();
      t.fit = fit(recorded_, core_order(world.events()));
    });
    t.requests = chooser.requests();
    ++runs_;
    return t;
  }

  // The best run of `prefix` followed by up to `depth` more chosen decisions.
  trial best_below(std::vector<std::uint32_t>& prefix, int depth) {
    trial best = attempt(prefix);
    std::size_t at = prefix.size();
    std::size_t pushed = 0;
    while (at < best.requests.size() && (best.requests[at].kind == sim::decision_kind::fault ||
                                         best.requests[at].options < 2)) {
      prefix.push_back(0);
      ++pushed;
      ++at;
    }
    if (depth > 0 && at < best.requests.size() && runs_ < budget_runs_) {
      const std::uint32_t options = best.requests[at].options;
      for (std::uint32_t option = 0; option < options; ++option) {
        prefix.push_back(option);
        trial t = best_below(prefix, depth - 1);
        prefix.pop_back();
        if (better(t, best)) best = std::move(t);
      }
    }
    prefix.resize(prefix.size() - pushed);
    return best;
  }

  // Exactly as recorded for as long as the simulator can; past the first recorded decision
  // it cannot take there, towards the recorded finding, then as close to the recorded order.
  bool better(const trial& a, const trial& b) const {
    if (agreement(a) != agreement(b)) return agreement(a) > agreement(b);
    const bool a_found = same_invariant(recorded_finding_, a.found);
    const bool b_found = same_invariant(recorded_finding_, b.found);
    if (a_found != b_found) return a_found;
    return a.fit.better_than(b.fit);
  }

  // How far a run agrees with the recording from its start. The simulator stops at its first
  // finding: a run that reached the recorded one having agreed all the way there agrees as
  // far as a run can (else a run that went on past the finding would look better).
  std::size_t agreement(const trial& t) const {
    const bool whole = t.fit.agreed == t.fit.followed + t.fit.own;
    if (recorded_finding_ && whole && same_invariant(recorded_finding_, t.found)) {
      return recorded_.size();
    }
    return t.fit.agreed;
  }

  const run_setup& setup_;
  std::vector<std::string> recorded_;
  std::optional<sim::finding> recorded_finding_;
  spec::rng walk_;
  std::uint64_t budget_runs_;
  std::uint64_t runs_ = 0;
  bool within_budget_ = true;
};

}  // namespace

bool same_invariant(const std::optional<sim::finding>& recorded,
                    const std::optional<sim::finding>& replayed) {
  if (recorded.has_value() != replayed.has_value()) return false;
  return !recorded || recorded->invariant == replayed->invariant;
}

recording_replay replay_recording(const loaded_trace& loaded,
                                  std::optional<core::variant> core_variant, bool follow) {
  run_setup setup = loaded.setup("replay-lenient", core_variant);
  setup.faults = sim::fault_profile{};  // none: the real run injected none
  const std::vector<std::string> recorded = core_order(loaded.trace.events);
  // The core's order does not pin everything down (when a storage read or a copy lands is no
  // core decision), and the walk may settle such a choice early, out of the lookahead's
  // sight of the finding. So the steering starts again with the walk seeded seed+1, seed+2,
  // ... until a run reaches the recorded invariant; else the best run, the first attempt's
  // on a tie. Ignoring the recording, one walk.
  recording_replay result;
  std::optional<std::vector<std::uint32_t>> chosen;
  order_fit chosen_fit;
  bool chosen_found = false;
  for (std::uint64_t attempt = 0; attempt < (follow ? attempts_max : 1); ++attempt) {
    steering steer(setup, recorded, loaded.trace.found, loaded.trace.seed + attempt,
                   runs_max - std::min(result.runs, runs_max));
    std::vector<std::uint32_t> prefix = steer.choose_all(follow);
    result.runs += steer.runs();
    result.within_budget = result.within_budget && steer.within_budget();
    steered chooser(prefix);
    bool found = false;
    order_fit run_fit;
    run_inspecting(setup, chooser, [&](const sim::world& world, const sim::run_outcome&) {
      found = same_invariant(loaded.trace.found, world.found());
      run_fit = fit(recorded, core_order(world.events()));
    });
    ++result.runs;
    result.attempts = attempt + 1;
    if (!chosen || (found && !chosen_found) ||
        (found == chosen_found && run_fit.better_than(chosen_fit))) {
      chosen = std::move(prefix);
      chosen_fit = run_fit;
      chosen_found = found;
    }
    if (chosen_found || result.runs >= runs_max) break;
  }
  steered final_chooser(*chosen);
  result.report = run_once(setup, final_chooser);
  result.fit = fit(recorded, core_order(result.report.events));
  return result;
}

}  // namespace kvsim::tools
