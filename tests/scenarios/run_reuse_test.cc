// Runs one after another share what a search reuses (one pool of fiber stacks for all of its
// runs, sim/fiber_stacks.h); none of that may carry state from one run into the next. Each run is
// judged by its decisions (their hash) and its whole trace (a digest of its JSON), and these
// must not depend on which runs came before it: seeds forward, backward, and interleaved with
// other scenarios and variants give each (scenario, variant, seed) the same run.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/fnv1a.h"
#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/decision.h"
#include "sim/search/random_walk.h"
#include "sim/run_trace.h"
#include "sim/trace.h"

namespace kvsim::scenarios::run_reuse_test {
namespace {

struct run_key {
  std::string scenario;
  std::string variant;
  std::uint64_t seed = 0;
  auto operator<=>(const run_key&) const = default;
};

struct run_fingerprint {
  std::uint64_t decision_hash = 0;
  std::uint64_t trace_digest = 0;
  bool operator==(const run_fingerprint&) const = default;
};

using kvsim::testing::fnv1a;

const std::vector<scenario_spec>& catalogue() {
  static const std::vector<scenario_spec> all = load_catalogue(KVSIM_CATALOGUE);
  return all;
}

const scenario_spec& scenario(const std::string& name) {
  for (const scenario_spec& s : catalogue()) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no scenario " + name + " in the catalogue");
}

// `stacks`: the pool the run's world takes its fiber stacks from (null: the world's own).
run_fingerprint run(const run_key& key, sim::fiber_stacks* stacks) {
  const scenario_spec& spec = scenario(key.scenario);
  const core::variant v = *variant_from_name(key.variant);
  sim::random_walk chooser(key.seed);
  const sim::fault_profile faults = sim::fault_profile::draw(key.seed, allowed_faults(spec));
  const auto w = make_scenario_world(spec, v, chooser, faults, stacks);
  properties::checker_set checkers(properties::liveness_from_us(faults), spec.heal_bound_us);
  checkers.attach(w->world());
  w->run();
  const sim::trace t = sim::capture_trace(w->world(), to_json(spec), key.variant, chooser.name(), key.seed);
  return {sim::decision_hash(w->world().decisions()), fnv1a(sim::to_json(t).dump())};
}

using fingerprints = std::map<run_key, run_fingerprint>;

// Each run of `order` with fresh stacks of its own world.
void run_alone(const std::vector<run_key>& order, fingerprints& out) {
  for (const run_key& key : order) out[key] = run(key, nullptr);
}

// Every run of `order` takes its stacks from one pool, as a search's runs do: each run after
// the first on stacks the runs before it used.
void run_all(const std::vector<run_key>& order, fingerprints& out) {
  sim::fiber_stacks stacks;
  for (const run_key& key : order) out[key] = run(key, &stacks);
  EXPECT_EQ(stacks.outstanding(), 0u);
  EXPECT_GT(stacks.kept(), 0u);  // the stacks came back to the pool, not to the heap
}

// A transfer and a prefetch world (different actors and stack counts), safe and broken.
const std::vector<std::pair<std::string, std::string>> mixes = {
    {"page42", "safe"}, {"room_churn", "B10"}, {"hicache_local_active", "safe"}, {"b3_source_reuse", "B3"},
    {"batch_pool_pressure", "B1"}};  // actors spawned mid-run, on strands
constexpr std::uint64_t seeds = 50;

TEST(RunReuse, ARunDoesNotDependOnTheRunsBeforeIt) {
  // Reference: each scenario's seeds forward, one scenario after another, each run on fresh
  // stacks of its own.
  std::vector<run_key> forward;
  for (const auto& [name, variant] : mixes) {
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) forward.push_back({name, variant, seed});
  }
  fingerprints reference;
  run_alone(forward, reference);

  // The same order on one pool.
  fingerprints pooled;
  run_all(forward, pooled);

  // The same runs backward, scenario order reversed too.
  const std::vector<run_key> backward(forward.rbegin(), forward.rend());
  fingerprints reversed;
  run_all(backward, reversed);

  // Interleaved: seed by seed, every scenario in turn, from the last seed down.
  std::vector<run_key> interleaved;
  for (std::uint64_t seed = seeds; seed >= 1; --seed) {
    for (const auto& [name, variant] : mixes) interleaved.push_back({name, variant, seed});
  }
  fingerprints mixed;
  run_all(interleaved, mixed);

  ASSERT_EQ(reference.size(), mixes.size() * seeds);
  for (const auto& [key, print] : reference) {
    EXPECT_EQ(pooled.at(key), print) << key.scenario << " " << key.variant << " seed " << key.seed
                                     << " forward on one pool";
    EXPECT_EQ(reversed.at(key), print) << key.scenario << " " << key.variant << " seed " << key.seed
                                       << " backward";
    EXPECT_EQ(mixed.at(key), print) << key.scenario << " " << key.variant << " seed " << key.seed
                                    << " interleaved";
  }
}

}  // namespace
}  // namespace kvsim::scenarios::run_reuse_test
