// run_once keeps what its caller asks for and no less: a search (verdict_only) gets the same
// verdict as a run that keeps everything, without the decisions it does not read; shrink
// (outcome_only) still gets them; on_finding keeps the trace of a run with a finding only.
#include <gtest/gtest.h>

#include <cstdint>

#include "properties/all_checkers.h"
#include "tools/kvsim/catalogue_location.h"
#include "tools/kvsim/run_one.h"
#include "tools/kvsim/strategy_spec.h"

namespace kvsim::tools::run_keep_test {
namespace {

run_report run_with(const scenarios::scenario_spec& spec, core::variant variant, std::uint64_t seed,
                    keep what) {
  const strategy_spec random = parse_strategy("random");
  const run_setup setup{spec, variant, random.text(), seed, faults_for(spec, seed),
                        properties::checker_family::all};
  const auto chooser = random.make(seed);
  return run_once(setup, *chooser, what);
}

TEST(RunKeep, EachLevelKeepsItsShareAndTheVerdictNeverChanges) {
  const auto all = load_scenarios(default_catalogue());
  const auto spec = find_scenario(all, "page42", default_catalogue());
  int findings = 0;
  for (const auto& variant : {core::variant::safe(), parse_variant("B1")}) {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const run_report full = run_with(spec, variant, seed, keep::everything);
      ASSERT_FALSE(full.decisions.empty());
      ASSERT_NE(full.decision_hash, 0u);
      EXPECT_EQ(full.decision_count, full.decisions.size());
      findings += full.found ? 1 : 0;

      const run_report verdict = run_with(spec, variant, seed, keep::verdict_only);
      EXPECT_EQ(verdict.found.has_value(), full.found.has_value());
      if (full.found) {
        EXPECT_EQ(verdict.found->message, full.found->message);
      }
      EXPECT_EQ(verdict.outcome.steps, full.outcome.steps);
      EXPECT_EQ(verdict.decision_count, full.decisions.size());
      EXPECT_TRUE(verdict.decisions.empty());
      EXPECT_EQ(verdict.decision_hash, 0u);
      EXPECT_EQ(verdict.probes, full.probes);

      const run_report outcome = run_with(spec, variant, seed, keep::outcome_only);
      EXPECT_EQ(outcome.decisions, full.decisions);
      EXPECT_EQ(outcome.decision_hash, full.decision_hash);
      EXPECT_TRUE(outcome.events.empty());

      const run_report on_finding = run_with(spec, variant, seed, keep::on_finding);
      EXPECT_EQ(on_finding.events.empty(), !full.found.has_value());
      if (full.found) {
        EXPECT_EQ(on_finding.decision_hash, full.decision_hash);
      }
    }
  }
  EXPECT_GT(findings, 0) << "B1 never fired on page42: the test would not see on_finding keep";
}

}  // namespace
}  // namespace kvsim::tools::run_keep_test
