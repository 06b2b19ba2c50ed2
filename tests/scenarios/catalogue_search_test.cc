// Red before green on every catalogue scenario (transfer and prefetch): random search and PCT
// with each scenario's breaking variant find the invariant the catalogue names; with `safe`
// the same scenario gives no finding in KVSIM_SAFE_RUNS runs (10,000 by default); the canary
// is reported on every run. Every scenario's safe search hits the code probes it declares
// (expect_probes), and together the catalogue's safe searches hit every probe.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <set>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/code_probes.h"
#include "scenarios/scenario_world.h"
#include "sim/search/pct.h"
#include "sim/search/random_walk.h"

namespace kvsim::scenarios::catalogue_search_test {
namespace {

constexpr std::uint64_t red_runs_max = 2000;
constexpr std::uint64_t probe_runs_min = 2000;

std::uint64_t safe_runs() {
  const char* text = std::getenv("KVSIM_SAFE_RUNS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 10'000;
}

struct search_result {
  std::uint64_t runs = 0;
  std::uint64_t found_runs = 0;
  std::optional<sim::finding> first;
  probe_hits probes{};
};

enum class strategy_kind { random, pct3 };

search_result search(const scenario_spec& spec, core::variant v, std::uint64_t runs,
                     bool stop_at_first, strategy_kind kind = strategy_kind::random) {
  search_result result;
  sim::fiber_stacks stacks;  // one pool for every run, as kvsim's searches have
  for (std::uint64_t seed = 1; seed <= runs; ++seed) {
    sim::random_walk random(seed);
    // PCT's change points are spread over the first 100 steps: these runs take 30 to 60.
    sim::pct prioritized(seed, 3, 100);
    sim::strategy& chooser =
        kind == strategy_kind::random ? static_cast<sim::strategy&>(random) : prioritized;
    const auto w = make_scenario_world(spec, v, chooser, seed, &stacks);
    properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    ++result.runs;
    const probe_hits hits = count_probes(w->world().events());
    for (std::size_t i = 0; i < hits.size(); ++i) result.probes[i] += hits[i];
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
    for (const expectation_spec& expect : breaking_expectations(spec)) {
      if (expect.breaking_variant == "canary") continue;
      const auto started = std::chrono::steady_clock::now();
      const search_result red = search(spec, breaking_variant(expect), red_runs_max, true);
      const auto random_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
      const search_result pct =
          search(spec, breaking_variant(expect), red_runs_max, true, strategy_kind::pct3);
      std::cout << spec.name << " [" << expect.breaking_variant << "]: random "
                << (red.first
                        ? red.first->invariant + " after " + std::to_string(red.runs) +
                              " run(s), " + std::to_string(random_us) + " us: " + red.first->message
                        : "nothing in " + std::to_string(red.runs) + " runs")
                << "; pct:3 "
                << (pct.first
                        ? pct.first->invariant + " after " + std::to_string(pct.runs) + " run(s)"
                        : "nothing in " + std::to_string(pct.runs) + " runs")
                << "\n";
      // PCT is asserted like random search, not only printed: it must find every variant too,
      // with the scenario's invariant, within the same bound.
      const std::string row = spec.name + " [" + expect.breaking_variant + "]";
      if (!pct.first) {
        unfound.insert(row + " (pct:3)");
      } else {
        EXPECT_EQ(pct.first->invariant, expect.invariant)
            << row << " (pct:3): " << pct.first->message;
      }
      if (!red.first) {
        unfound.insert(row);
        continue;
      }
      EXPECT_EQ(red.first->invariant, expect.invariant) << row << ": " << red.first->message;
    }
  }
  EXPECT_TRUE(unfound.empty()) << unfound.size() << " breaking variant(s) not found: "
                               << ::testing::PrintToString(unfound);
}

TEST(CatalogueSearch, SafeCoreIsCleanOnEveryScenario) {
  const std::uint64_t runs = safe_runs();
  probe_hits everywhere{};
  for (const scenario_spec& spec : catalogue()) {
    const search_result green = search(spec, core::variant::safe(), runs, true);
    EXPECT_FALSE(green.first.has_value())
        << spec.name << " with safe, run " << green.runs << ": " << green.first->message;
    // Clean means something only where the search went: every declared probe was hit. The
    // catalogue declares probes hit on at least 1 in 200 runs, so a short run (the sanitizer
    // build's 300) may miss one by chance: coverage is judged from 2,000 runs on.
    for (const std::string& name : runs >= probe_runs_min ? spec.expect_probes
                                                          : std::vector<std::string>{}) {
      const auto p = probe_from_string(name);
      ASSERT_TRUE(p.has_value()) << name;
      EXPECT_GT(green.probes[static_cast<std::size_t>(*p)], 0u)
          << spec.name << " with safe: probe " << name << " never hit in " << green.runs << " runs";
    }
    for (std::size_t i = 0; i < probe_count; ++i) everywhere[i] += green.probes[i];
  }
  std::cout << "safe: " << runs << " runs per scenario, no finding\n";
  if (runs < probe_runs_min) return;
  for (std::size_t i = 0; i < probe_count; ++i) {
    EXPECT_GT(everywhere[i], 0u) << "no catalogue scenario's safe search hits probe "
                                 << to_string(static_cast<probe>(i));
  }
}

TEST(CatalogueSearch, EveryProbeIsDeclaredBySomeScenario) {
  std::set<std::string> declared;
  for (const scenario_spec& spec : catalogue()) {
    declared.insert(spec.expect_probes.begin(), spec.expect_probes.end());
  }
  for (std::size_t i = 0; i < probe_count; ++i) {
    const std::string name = to_string(static_cast<probe>(i));
    EXPECT_TRUE(declared.contains(name)) << "no catalogue scenario declares probe " << name;
  }
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
}  // namespace kvsim::scenarios::catalogue_search_test
