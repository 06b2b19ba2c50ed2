// Red before green on every catalogue scenario (transfer and prefetch): random search and PCT
// with each scenario's breaking variant find the invariant the catalogue names; with `safe`
// the same scenario gives no finding in KVSIM_SAFE_RUNS runs (10,000 by default); the canary
// is reported on every run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <set>

#include "properties/all_checkers.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/pct.h"
#include "sim/random_walk.h"

namespace kvsim::scenarios {
namespace {

constexpr std::uint64_t red_runs_max = 2000;


std::uint64_t safe_runs() {
  const char* text = std::getenv("KVSIM_SAFE_RUNS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 10'000;
}

struct search_result {
  std::uint64_t runs = 0;
  std::uint64_t found_runs = 0;
  std::optional<sim::finding> first;
};

enum class strategy_kind { random, pct3 };

search_result search(const scenario_spec& spec, core::variant v, std::uint64_t runs,
                     bool stop_at_first, strategy_kind kind = strategy_kind::random) {
  search_result result;
  for (std::uint64_t seed = 1; seed <= runs; ++seed) {
    sim::random_walk random(seed);
    // PCT's change points are spread over the first 100 steps: these runs take 30 to 60.
    sim::pct prioritized(seed, 3, 100);
    sim::strategy& chooser =
        kind == strategy_kind::random ? static_cast<sim::strategy&>(random) : prioritized;
    const auto w = make_scenario_world(spec, v, chooser, seed);
    properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    ++result.runs;
    if (!w->world().found()) continue;
    ++result.found_runs;
    if (!result.first) result.first = w->world().found();
    if (stop_at_first) break;
  }
  return result;
}

std::vector<scenario_spec> catalogue() { return load_catalogue(KVSIM_CATALOGUE); }

TEST(CatalogueSearch, EveryBreakingVariantIsFoundWithItsInvariant) {
  std::set<std::string> unfound;
  for (const scenario_spec& spec : catalogue()) {
    if (spec.expect.breaking_variant == "canary") continue;
    const auto started = std::chrono::steady_clock::now();
    const search_result red = search(spec, breaking_variant(spec),
                                     red_runs_max, true);
    const auto random_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - started)
                               .count();
    const search_result pct = search(spec, breaking_variant(spec),
                                     red_runs_max, true, strategy_kind::pct3);
    std::cout << spec.name << " [" << spec.expect.breaking_variant << "]: random "
              << (red.first ? red.first->invariant + " after " + std::to_string(red.runs) +
                                  " run(s), " + std::to_string(random_us) + " us: " +
                                  red.first->message
                            : "nothing in " + std::to_string(red.runs) + " runs")
              << "; pct:3 "
              << (pct.first ? pct.first->invariant + " after " + std::to_string(pct.runs) + " run(s)"
                            : "nothing in " + std::to_string(pct.runs) + " runs")
              << "\n";
    // PCT is asserted like random search, not only printed: it must find every variant too,
    // with the scenario's invariant, within the same bound.
    if (!pct.first) {
      unfound.insert(spec.expect.breaking_variant + " (pct:3)");
    } else {
      EXPECT_EQ(pct.first->invariant, spec.expect.invariant) << spec.name << " (pct:3): "
                                                             << pct.first->message;
    }
    if (!red.first) {
      unfound.insert(spec.expect.breaking_variant);
      continue;
    }
    EXPECT_EQ(red.first->invariant, spec.expect.invariant) << spec.name << ": "
                                                           << red.first->message;
  }
  EXPECT_TRUE(unfound.empty()) << unfound.size() << " breaking variant(s) not found: "
                               << ::testing::PrintToString(unfound);
}

TEST(CatalogueSearch, SafeCoreIsCleanOnEveryScenario) {
  const std::uint64_t runs = safe_runs();
  for (const scenario_spec& spec : catalogue()) {
    const search_result green = search(spec, core::variant::safe(), runs, true);
    EXPECT_FALSE(green.first.has_value())
        << spec.name << " with safe, run " << green.runs << ": " << green.first->message;
  }
  std::cout << "safe: " << runs << " runs per scenario, no finding\n";
}

TEST(CatalogueSearch, TheCanaryIsReportedOnEveryRun) {
  for (const scenario_spec& spec : catalogue()) {
    if (spec.expect.breaking_variant != "canary") continue;
    const search_result all = search(spec, breaking_variant(spec), 200, false);
    EXPECT_EQ(all.found_runs, all.runs) << "a run of the canary found nothing";
    ASSERT_TRUE(all.first.has_value());
    EXPECT_EQ(all.first->invariant, spec.expect.invariant);
    return;
  }
  FAIL() << "the catalogue has no canary scenario";
}

}  // namespace
}  // namespace kvsim::scenarios
