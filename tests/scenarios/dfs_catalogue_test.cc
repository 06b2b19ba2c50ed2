// Bounded exhaustive search (sim/dfs.h) on catalogue scenarios: within a preemption bound the
// search exhausts the scenario's interleavings, finds the catalogue's invariant with the
// breaking variant and nothing with `safe` (page42 with `safe`: nothing in a sample, its
// space is too big to exhaust here); sleep sets run fewer interleavings to the same verdict;
// a finding's decisions replay strictly. Runs, pruned options and time are printed.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "properties/all_checkers.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/dfs.h"
#include "sim/replay.h"

namespace kvsim::scenarios::dfs_catalogue_test {
namespace {

scenario_spec from_catalogue(const std::string& name) {
  for (const scenario_spec& s : load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no " << name << " in the catalogue";
  return {};
}

// One run of the scenario as the search wants it: a fresh world (seed 1: its fault profile),
// every checker attached.
sim::dfs_run_fn scenario_run(const scenario_spec& spec, core::variant v) {
  // One pool of fiber stacks for every run of the search, as kvsim's searches have.
  return [&spec, v, stacks = std::make_shared<sim::fiber_stacks>()](
             sim::strategy& chooser, const std::function<void(const sim::world&)>& inspect) {
    const auto w = make_scenario_world(spec, v, chooser, 1, stacks.get());
    properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    inspect(w->world());
  };
}

struct timed_result {
  sim::dfs_result result;
  std::int64_t elapsed_ms = 0;
};

timed_result search(const scenario_spec& spec, core::variant v, const char* label,
                    sim::dfs_options options) {
  const auto started = std::chrono::steady_clock::now();
  timed_result out;
  out.result = sim::dfs_search(scenario_run(spec, v), options);
  out.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  const sim::dfs_result& r = out.result;
  std::cout << "dfs " << spec.name << " [" << label << "] bound "
            << (options.preemption_bound ? std::to_string(*options.preemption_bound) : "none")
            << ", sleep sets " << (options.sleep_sets ? "on" : "off") << ": "
            << (r.exhausted ? "exhausted" : "NOT exhausted") << " in " << r.runs << " runs ("
            << r.pruned << " pruned, " << r.sleep_blocked << " sleep-blocked, " << r.beyond_bound
            << " beyond the bound, longest " << r.decisions_max << " decisions), "
            << out.elapsed_ms << " ms; "
            << (r.first_finding ? std::to_string(r.findings) + " run(s) with a finding, first " +
                                      r.first_finding->invariant
                                : "no finding")
            << "\n";
  return out;
}

sim::dfs_options within(std::uint32_t preemptions, bool sleep_sets = true) {
  sim::dfs_options options;
  options.preemption_bound = preemptions;
  options.sleep_sets = sleep_sets;
  options.max_runs = 200'000;  // far above what these need: a safety net, not the bound
  return options;
}

// The bounds are what keeps each search to a few hundred runs: under AddressSanitizer a run
// of these worlds costs about 2.5 ms.
struct dfs_case {
  const char* scenario;
  std::uint32_t preemptions;  // the preemption bound of the red and green searches
  // 0: the green (safe) search exhausts the space within the bound. Otherwise the space is
  // too big for a unit test and the green search stops, unexhausted, after this many runs.
  std::uint64_t safe_runs_max;
  // The bound of the comparison with and without sleep sets (the search without them is the
  // expensive one).
  std::uint32_t reduction_preemptions;
};

class DfsCatalogue : public ::testing::TestWithParam<dfs_case> {};

TEST_P(DfsCatalogue, BreakingVariantIsFoundAndSafeIsCleanWithinTheBound) {
  const scenario_spec spec = from_catalogue(GetParam().scenario);
  const timed_result red =
      search(spec, breaking_variant(spec), spec.expect.breaking_variant.c_str(),
             within(GetParam().preemptions));
  EXPECT_TRUE(red.result.exhausted);
  ASSERT_TRUE(red.result.first_finding.has_value());
  EXPECT_EQ(red.result.first_finding->invariant, spec.expect.invariant)
      << red.result.first_finding->message;

  sim::dfs_options safe_options = within(GetParam().preemptions);
  if (GetParam().safe_runs_max != 0) safe_options.max_runs = GetParam().safe_runs_max;
  const timed_result green = search(spec, core::variant::safe(), "safe", safe_options);
  EXPECT_EQ(green.result.exhausted, GetParam().safe_runs_max == 0);
  EXPECT_EQ(green.result.findings, 0u)
      << (green.result.first_finding ? green.result.first_finding->message : "");
}

TEST_P(DfsCatalogue, AFindingsDecisionsReplayStrictlyToTheSameInvariant) {
  const scenario_spec spec = from_catalogue(GetParam().scenario);
  sim::dfs_options options = within(GetParam().preemptions);
  options.stop_at_first_finding = true;
  const sim::dfs_result red =
      sim::dfs_search(scenario_run(spec, breaking_variant(spec)), options);
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

// The reduction prunes and keeps the verdict: with sleep sets the search runs fewer
// interleavings than without, to the same verdict (found or not, the same invariant first).
// page42 only with B1: with `safe` neither search exhausts its space in a unit test's time.
TEST_P(DfsCatalogue, SleepSetsRunFewerInterleavingsToTheSameVerdict) {
  const scenario_spec spec = from_catalogue(GetParam().scenario);
  std::vector<core::variant> variants{breaking_variant(spec)};
  if (GetParam().safe_runs_max == 0) variants.push_back(core::variant::safe());
  for (const core::variant& v : variants) {
    const std::string label = v == core::variant::safe() ? "safe" : spec.expect.breaking_variant;
    const timed_result on = search(spec, v, label.c_str(), within(GetParam().reduction_preemptions, true));
    const timed_result off = search(spec, v, label.c_str(), within(GetParam().reduction_preemptions, false));
    EXPECT_TRUE(on.result.exhausted) << label;
    EXPECT_TRUE(off.result.exhausted) << label;
    EXPECT_LT(on.result.runs, off.result.runs) << label;
    EXPECT_GT(on.result.pruned, 0u) << label;
    EXPECT_EQ(off.result.pruned, 0u) << label;
    ASSERT_EQ(on.result.first_finding.has_value(), off.result.first_finding.has_value()) << label;
    if (on.result.first_finding) {
      EXPECT_EQ(on.result.first_finding->invariant, off.result.first_finding->invariant) << label;
    }
  }
}

// page42 with `safe` runs to the end (B1 ends every run at the finding): its four prefill-
// rank actors poll every 5 us and, all touching that rank, are dependent, so their order at
// each tick is an interleaving of its own. With bound 0 and sleep sets its space took 409,036
// runs (89 s in Release) to exhaust; here the green search only samples it.
INSTANTIATE_TEST_SUITE_P(Catalogue, DfsCatalogue,
                         ::testing::Values(dfs_case{"page42", 1, 300, 0},
                                           dfs_case{"hicache_local_missing", 2, 0, 1},
                                           dfs_case{"hicache_local_pending", 2, 0, 1},
                                           dfs_case{"hicache_local_active", 2, 0, 1}),
                         [](const auto& case_info) { return std::string(case_info.param.scenario); });

}  // namespace
}  // namespace kvsim::scenarios::dfs_catalogue_test
