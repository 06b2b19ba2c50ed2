// Exhaustive search (sim/search/dpor.h) on catalogue scenarios, as `kvsim explore --strategy dpor:P`
// runs it: within a preemption bound the search exhausts the scenario's interleavings, finds
// the catalogue's invariant with the breaking variant and nothing with `safe` (page42 with
// `safe`: nothing in a sample, its space is too big to exhaust here); a finding's decisions
// replay strictly to the same finding. Runs and time are printed.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/dpor.h"
#include "sim/search/replay.h"
#include "tests/scenarios/dpor_scenario_run.h"
#include "tests/support/catalogue_scenarios.h"

namespace kvsim::scenarios::dpor_catalogue_test {
namespace {

using testing::from_catalogue;

sim::dpor_run_fn scenario_run(const scenario_spec& spec, core::variant v) {
  return testing::dpor_scenario_run(spec, v);
}

sim::dpor_result search(const scenario_spec& spec, core::variant v, const sim::dpor_options& options) {
  const auto started = std::chrono::steady_clock::now();
  sim::dpor_result r = sim::dpor_search(scenario_run(spec, v), options);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  std::cout << "dpor " << spec.name << " [" << v.name() << "] bound "
            << (options.preemption_bound ? std::to_string(*options.preemption_bound) : "none") << ": "
            << (r.exhausted ? "exhausted" : "NOT exhausted") << " in " << r.runs << " runs ("
            << r.pruned << " pruned, " << r.beyond_bound << " beyond the bound), " << ms << " ms; "
            << (r.first_finding ? std::to_string(r.findings) + " run(s) with a finding, first " +
                                      r.first_finding->invariant
                                : "no finding")
            << "\n";
  return r;
}

sim::dpor_options within(std::uint32_t preemptions) {
  sim::dpor_options options;
  options.preemption_bound = preemptions;
  options.max_runs = 200'000;  // far above what these need: a safety net, not the bound
  return options;
}

struct dpor_case {
  const char* scenario;
  std::uint32_t preemptions;  // the preemption bound of the red and green searches
  // 0: the green (safe) search exhausts the space within the bound. Otherwise the space is
  // too big for a unit test and the green search stops, unexhausted, after this many runs.
  std::uint64_t safe_runs_max;
};

class DporCatalogue : public ::testing::TestWithParam<dpor_case> {};

TEST_P(DporCatalogue, BreakingVariantIsFoundAndSafeIsCleanWithinTheBound) {
  const scenario_spec spec = from_catalogue(GetParam().scenario);
  const sim::dpor_result red = search(spec, breaking_variant(spec), within(GetParam().preemptions));
  EXPECT_TRUE(red.exhausted);
  ASSERT_TRUE(red.first_finding.has_value());
  EXPECT_EQ(red.first_finding->invariant, spec.expect.invariant) << red.first_finding->message;

  sim::dpor_options safe_options = within(GetParam().preemptions);
  if (GetParam().safe_runs_max != 0) safe_options.max_runs = GetParam().safe_runs_max;
  const sim::dpor_result green = search(spec, core::variant::safe(), safe_options);
  EXPECT_EQ(green.exhausted, GetParam().safe_runs_max == 0);
  EXPECT_EQ(green.findings, 0u) << (green.first_finding ? green.first_finding->message : "");
}

TEST_P(DporCatalogue, AFindingsDecisionsReplayStrictlyToTheSameInvariant) {
  const scenario_spec spec = from_catalogue(GetParam().scenario);
  sim::dpor_options options = within(GetParam().preemptions);
  options.stop_at_first_finding = true;
  const sim::dpor_result red = sim::dpor_search(scenario_run(spec, breaking_variant(spec)), options);
  ASSERT_TRUE(red.first_finding.has_value());
  sim::replay again(red.first_finding_decisions, sim::replay_mode::strict);
  std::optional<sim::finding> replayed;
  std::optional<sim::divergence> diverged;
  scenario_run(spec, breaking_variant(spec))(again, [&](const sim::world& w) {
    replayed = w.found();
    diverged = w.diverged();
  });
  EXPECT_FALSE(diverged.has_value()) << diverged->expected << " / " << diverged->actual;
  ASSERT_TRUE(replayed.has_value());
  EXPECT_EQ(replayed->invariant, spec.expect.invariant);
  EXPECT_EQ(*replayed, *red.first_finding);
}

// page42 with `safe` runs to the end (B1 ends every run at the finding): its space within
// bound 1 is too big for a unit test, so the green search only samples it.
INSTANTIATE_TEST_SUITE_P(Catalogue, DporCatalogue,
                         ::testing::Values(dpor_case{"page42", 1, 300},
                                           dpor_case{"hicache_local_missing", 2, 0},
                                           dpor_case{"hicache_local_pending", 2, 0},
                                           dpor_case{"hicache_local_active", 2, 0}),
                         [](const auto& case_info) { return std::string(case_info.param.scenario); });

}  // namespace
}  // namespace kvsim::scenarios::dpor_catalogue_test
