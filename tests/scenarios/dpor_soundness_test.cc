// Soundness of the partial-order reduction (sim/search/dpor.h) on catalogue scenarios: dpor reaches
// exactly the terminal states, findings and Mazurkiewicz traces (classes of runs equal up to
// the order of independent steps) that the sleep-set search reaches, which runs every option
// not asleep (Godefroid's search, complete for the same independence); with at most twice as
// many runs as traces. Brute force (every option at every decision) is out of reach here:
// hicache_local_missing alone passes 400,000 runs without exhausting; tests/sim/dpor_test.cc
// holds dpor against brute force on worlds small enough for it. Runs, traces and time are
// printed.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/declaration_check.h"
#include "sim/search/dpor.h"
#include "tests/scenarios/dpor_scenario_run.h"
#include "tests/support/catalogue_scenarios.h"

namespace kvsim::scenarios::dpor_soundness_test {
namespace {

using testing::from_catalogue;

sim::dpor_run_fn scenario_run(const scenario_spec& spec, core::variant v) {
  return testing::dpor_scenario_run(spec, v);
}

sim::dpor_result search(const scenario_spec& spec, core::variant v, sim::reduction mode,
                        std::uint32_t max_faults) {
  sim::dpor_options options;
  options.mode = mode;
  options.max_faults = max_faults;
  options.max_runs = 400'000;  // a safety net far above what these need
  options.collect_trace_classes = true;
  const auto started = std::chrono::steady_clock::now();
  sim::dpor_result r = sim::dpor_search(scenario_run(spec, v), options);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  std::cout << (mode == sim::reduction::dpor ? "dpor  " : mode == sim::reduction::none ? "brute " : "sleep ") << spec.name << " [" << v.name() << "] faults<="
            << max_faults << ": " << (r.exhausted ? "exhausted" : "NOT exhausted") << " in "
            << r.runs << " runs (" << r.trace_classes.size() << " traces, "
            << r.terminal_digests.size() << " terminal states, " << r.sleep_blocked
            << " sleep-blocked), " << ms << " ms\n";
  return r;
}

struct soundness_case {
  std::string label;
  scenario_spec spec;
  std::uint32_t max_faults = 0;
};

// Smaller copies of catalogue scenarios: page42 with one page per request, and so on.
scenario_spec with_pages(scenario_spec spec, std::uint32_t pages, std::string suffix) {
  for (request_spec& r : spec.requests) r.pages = pages;
  for (auto& g : spec.faults.gates) g.before_page = std::min(g.before_page, pages - 1);
  spec.name += suffix;
  return spec;
}

void expect_sound(const scenario_spec& spec, core::variant v, std::uint32_t max_faults,
                  sim::reduction reference = sim::reduction::sleep_sets_only) {
  const sim::dpor_result brute = search(spec, v, reference, max_faults);
  const sim::dpor_result reduced = search(spec, v, sim::reduction::dpor, max_faults);
  ASSERT_TRUE(brute.exhausted) << spec.name;
  ASSERT_TRUE(reduced.exhausted) << spec.name;
  EXPECT_EQ(reduced.terminal_digests, brute.terminal_digests) << spec.name;
  EXPECT_EQ(reduced.finding_invariants, brute.finding_invariants) << spec.name;
  // Every clean trace the reference ran, dpor ran; and no checker judged two orders of
  // independent steps differently (the frees of pages are declared as writes of them).
  EXPECT_EQ(reduced.trace_classes, brute.trace_classes) << spec.name;
  if (brute.findings > 0) {
    // A finding ends its run where its checker fires: finding runs are not whole traces.
    EXPECT_LE(reduced.runs, brute.runs) << spec.name;
    return;
  }
  // One run per trace is the optimum.
  EXPECT_LE(reduced.runs, 2 * brute.trace_classes.size()) << spec.name;
}

TEST(DporSoundness, HicacheLocalMissing) {
  const scenario_spec spec = from_catalogue("hicache_local_missing");
  expect_sound(spec, core::variant::safe(), 0);
  expect_sound(spec, breaking_variant(spec), 0);
}

TEST(DporSoundness, HicacheLocalPending) {
  const scenario_spec spec = from_catalogue("hicache_local_pending");
  expect_sound(spec, core::variant::safe(), 0);
  expect_sound(spec, breaking_variant(spec), 0);
}

TEST(DporSoundness, H3SkipReduce) {
  const scenario_spec spec = from_catalogue("h3_skip_reduce");
  expect_sound(spec, core::variant::safe(), 0);
  expect_sound(spec, breaking_variant(spec), 0);
}

TEST(DporSoundness, HicacheLocalActiveOnePage) {
  const scenario_spec spec = with_pages(from_catalogue("hicache_local_active"), 1, "_1page");
  expect_sound(spec, core::variant::safe(), 0);
  expect_sound(spec, breaking_variant(spec), 0);
}

TEST(DporSoundness, Page42OnePage) {
  const scenario_spec spec = with_pages(from_catalogue("page42"), 1, "_1page");
  expect_sound(spec, breaking_variant(spec), 0);
  expect_sound(spec, core::variant::safe(), 0);
}

// Two requests on two decode ranks, each transfer in one page, the second aborted by
// decode: a 2-request transfer without gates, so the search places the abort.
TEST(DporSoundness, TwoRequestTransfer) {
  scenario_spec spec = with_pages(from_catalogue("page42"), 1, "_2req");
  spec.faults.gates.clear();
  spec.requests[1].after.reset();
  spec.requests[1].room = 43;
  expect_sound(spec, core::variant::safe(), 0);
}

// The declarations the reduction trusts hold on every catalogue scenario: on random runs of
// the safe core (faults as choices, firing now and then), swapping any two neighbouring
// steps that declared nothing in common changes neither the terminal state nor the rest of
// the run.
TEST(DeclarationCheck, EveryCatalogueScenarioDeclaresWhatItsStepsTouch) {
  for (const scenario_spec& spec : load_catalogue(KVSIM_CATALOGUE)) {
    std::uint64_t swaps = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const sim::declaration_check_result r =
          sim::check_declarations(scenario_run(spec, core::variant::safe()), seed, 40);
      swaps += r.swaps;
      EXPECT_FALSE(r.violation) << spec.name << " seed " << seed << ": " << r.violation->what;
    }
    std::cout << spec.name << ": " << swaps << " swaps of independent neighbours, none changed the outcome\n";
  }
}

}  // namespace
}  // namespace kvsim::scenarios::dpor_soundness_test
