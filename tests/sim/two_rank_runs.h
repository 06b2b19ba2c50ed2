#pragma once
// Shared by the simulator tests: one run of the two-rank test world with the I1 and I8
// checkers attached, and everything a test wants to compare afterwards.
#include <memory>
#include <string>
#include <vector>

#include "properties/leak_checker.h"
#include "properties/use_after_free_checker.h"
#include "scenarios/two_rank_abort.h"
#include "sim/search/pct.h"
#include "sim/search/random_walk.h"
#include "sim/search/replay.h"

namespace kvsim::testing {

struct run_record {
  sim::run_outcome outcome;
  std::vector<sim::decision> decisions;
  std::vector<std::string> event_lines;
  std::optional<sim::finding> found;
  std::optional<sim::divergence> diverged;
};

inline run_record run_two_rank(sim::strategy& chooser, std::uint64_t seed,
                               scenarios::two_rank_options options) {
  scenarios::two_rank_abort_world w(chooser, seed, options);
  properties::use_after_free_checker use_after_free;
  properties::leak_checker leaks;
  w.world().add_checker(use_after_free);
  w.world().add_checker(leaks);
  run_record record;
  record.outcome = w.run();
  record.decisions = w.world().decisions();
  for (const auto& e : w.world().events()) {
    record.event_lines.push_back(sim::describe(e, w.world().actor_names()));
  }
  record.found = w.world().found();
  record.diverged = w.world().diverged();
  return record;
}

inline run_record run_random(std::uint64_t seed, scenarios::two_rank_options options = {}) {
  sim::random_walk chooser(seed);
  return run_two_rank(chooser, seed, options);
}

inline scenarios::two_rank_options planted_use_after_free() {
  scenarios::two_rank_options options;
  options.release_before_drain = true;
  return options;
}

}  // namespace kvsim::testing
