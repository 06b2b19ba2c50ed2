// The scenario swarm's generator: deterministic per seed, always a scenario the catalogue
// accepts, reaching every field of the schema over a few thousand seeds; the safe core is
// clean on generated scenarios, and a broken core is caught on them.
#include "spec/scenario_generator.h"

#include <gtest/gtest.h>

#include <set>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/random_walk.h"

namespace kvsim::scenarios::scenario_generator_test {
namespace {

constexpr std::uint64_t seeds = 3000;

TEST(ScenarioGenerator, TheSameSeedGivesTheSameScenarioAndSeedsDiffer) {
  EXPECT_EQ(generate_scenario(7), generate_scenario(7));
  std::set<std::string> distinct;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) distinct.insert(to_json(generate_scenario(seed)).dump());
  EXPECT_GT(distinct.size(), 95u);
}

TEST(ScenarioGenerator, EveryScenarioIsValidAndRoundTrips) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const scenario_spec s = generate_scenario(seed);
    ASSERT_EQ(parse_scenario(to_json(s), "generated"), s) << "seed " << seed;
    EXPECT_EQ(s.name, generated_scenario_name);
  }
}

TEST(ScenarioGenerator, EveryPartOfTheSchemaIsDrawn) {
  std::set<std::string> seen;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const scenario_spec s = generate_scenario(seed);
    seen.insert(to_string(s.kind));
    if (s.kind == scenario_kind::prefetch) {
      for (auto state : s.faults.prefetch_states) seen.insert("state " + std::to_string(static_cast<int>(state)));
      continue;
    }
    if (s.topology.prefill_ranks > 1) seen.insert("prefill ranks > 1");
    if (s.topology.decode_ranks > 1) seen.insert("decode ranks > 1");
    if (s.topology.concurrency > 1) seen.insert("requests at once");
    if (!s.topology.pages_by_rank.empty()) seen.insert("a pool per rank");
    for (std::size_t rank = 0; rank < s.topology.pages_by_rank.size(); ++rank) {
      // A pool too small for every request at once: requests queue for its pages.
      std::uint32_t wanted = 0;
      for (const request_spec& r : s.requests) wanted += r.pages;
      if (s.topology.concurrency > 1 && s.topology.pages_of(rank) < wanted) seen.insert("pool short of the load");
    }
    std::set<core::room_id> rooms;
    for (const request_spec& r : s.requests) {
      if (!rooms.insert(r.room).second) seen.insert("room reuse");
      if (r.chunks > 1) seen.insert("chunks > 1");
      if (r.siblings > 1) seen.insert("siblings > 1");
      if (r.abort) seen.insert(std::string("abort ") + to_string(*r.abort));
      if (r.abort && r.origin == abort_origin::prefill) seen.insert("prefill origin");
      if (!r.abort_from.empty()) seen.insert("abort_from");
      if (r.after) seen.insert("after");
      if (r.arrive_at_us && *r.arrive_at_us > 0) seen.insert("arrivals over time");
    }
    const fault_spec& f = s.faults;
    if (!f.gates.empty()) seen.insert("gate");
    for (const spec::fault_kind_row& row : spec::fault_kinds) {
      if (f.on(row.kind)) seen.insert("fault " + std::string(row.scenario_key));
    }
    if (f.deadline_us) seen.insert("deadline");
    const engine_spec& e = s.engine;
    if (e.decode_steps > 0) seen.insert("decode steps");
    if (e.store_on_finish) seen.insert("store on finish");
    if (e.preemption != preemption_mode::none) {
      seen.insert(std::string("preemption ") + to_string(e.preemption));
    }
    if (e.store_jobs_max < engine_spec{}.store_jobs_max) seen.insert("small store table");
    if (e.pool_full == pool_full_policy::fail) seen.insert("pool full fails");
  }
  std::vector<std::string> wanted{
      "transfer", "prefetch", "state 0", "state 1", "state 2", "prefill ranks > 1",
      "decode ranks > 1", "room reuse", "chunks > 1", "siblings > 1", "abort before_open",
      "abort before_transfer", "abort during_transfer", "abort after_transfer", "abort anytime",
      "abort before_admission", "prefill origin", "abort_from", "after", "gate", "deadline",
      "requests at once", "a pool per rank", "pool short of the load", "arrivals over time",
      "decode steps", "store on finish", "preemption recompute", "preemption offload",
      "small store table", "pool full fails"};
  // Every fault kind a scenario can switch on (spec/fault_kinds.h): a kind added to the table
  // and not to the swarm fails here.
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (!row.scenario_key.empty()) wanted.push_back("fault " + std::string(row.scenario_key));
  }
  for (const std::string& want : wanted) {
    EXPECT_TRUE(seen.contains(want)) << want << " never drawn in " << seeds << " seeds";
  }
}

// A pin (requests[i].pin) replays a logged timeline; the swarm draws its own timing and
// pages, so no generated scenario pins, and none writes a "pin" into its trace.
TEST(ScenarioGenerator, NoScenarioIsPinned) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const scenario_spec s = generate_scenario(seed);
    for (const request_spec& r : s.requests) ASSERT_FALSE(r.pin.has_value()) << "seed " << seed;
    ASSERT_EQ(to_json(s).dump().find("\"pin\""), std::string::npos) << "seed " << seed;
  }
}

std::uint64_t seeds_with_findings(core::variant v, std::uint64_t runs) {
  std::uint64_t found = 0;
  for (std::uint64_t seed = 1; seed <= runs; ++seed) {
    const scenario_spec spec = generate_scenario(seed);
    sim::random_walk chooser(seed);
    const auto w = make_scenario_world(spec, v, chooser, seed);
    properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    if (w->world().found()) ++found;
  }
  return found;
}

TEST(ScenarioGenerator, SafeIsCleanAndABrokenCoreIsCaught) {
  EXPECT_EQ(seeds_with_findings(core::variant::safe(), 500), 0u);
  // Red before green: decode freeing its pages at abort (B1) shows on generated scenarios.
  EXPECT_GT(seeds_with_findings(core::variant::with(core::bug::b1_destination_reuse), 500), 0u);
}

}  // namespace
}  // namespace kvsim::scenarios::scenario_generator_test
