// Transfer worlds whose decode ranks run requests after their transfer (the scenario's
// `engine` block): forward passes, write-back and offload store jobs, preemption at a step the
// search picks and the resume as the next generation of the room. What a user relies on:
// without an engine block nothing changes; the store's reads are judged on their bytes, so the
// three historical store bugs are found by their damage on some seeds and not on others (the
// race is searched, not scripted); the same seed writes the same trace.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "properties/all_checkers.h"
#include "scenarios/scenario_world.h"
#include "sim/decision.h"
#include "sim/run_trace.h"
#include "sim/search/random_walk.h"
#include "sim/trace.h"
#include "spec/catalogue.h"
#include "tests/support/fnv1a.h"

namespace kvsim::scenarios::decode_run_test {
namespace {

using kvsim::testing::fnv1a;

struct one_run {
  std::uint64_t trace_digest = 0;
  std::optional<sim::finding> found;
  std::vector<sim::sim_event> events;
};

one_run run(const scenario_spec& spec, const std::string& variant, std::uint64_t seed,
            properties::checker_family family = properties::checker_family::all) {
  sim::random_walk chooser(seed);
  const sim::fault_profile faults = sim::fault_profile::draw(seed, allowed_faults(spec));
  const auto w = make_scenario_world(spec, *variant_from_name(variant), chooser, faults);
  properties::checker_set checkers(properties::liveness_from_us(faults), spec.heal_bound_us);
  checkers.attach(w->world(), family);
  w->run();
  const sim::trace t = sim::capture_trace(w->world(), to_json(spec), variant, chooser.name(), seed);
  return {fnv1a(sim::to_json(t).dump()), w->world().found(), w->world().events()};
}

const scenario_spec& shipped(const std::string& name) {
  static const std::vector<scenario_spec> all = load_catalogue(KVSIM_CATALOGUE);
  for (const scenario_spec& s : all) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no scenario " + name);
}

template <class T>
std::vector<std::pair<core::rank_id, T>> decided(const std::vector<sim::sim_event>& events) {
  std::vector<std::pair<core::rank_id, T>> out;
  for (const sim::sim_event& e : events) {
    if (const auto* d = std::get_if<sim::core_decided>(&e.body)) {
      if (const auto* body = std::get_if<T>(&d->what.body)) out.emplace_back(d->what.rank, *body);
    }
  }
  return out;
}

// Seeds 1..n on which `variant` is found by the damage checkers, as `invariant`.
std::uint32_t damaged_seeds(const scenario_spec& spec, const std::string& variant,
                            const std::string& invariant, std::uint32_t n) {
  std::uint32_t found = 0;
  for (std::uint64_t seed = 1; seed <= n; ++seed) {
    const one_run r = run(spec, variant, seed, properties::checker_family::damage);
    if (r.found) {
      EXPECT_EQ(r.found->invariant, invariant) << variant << " seed " << seed << ": " << r.found->message;
      ++found;
    }
  }
  return found;
}

// Red on some seeds and not on others, green on all of them: the race is the search's.
TEST(DecodeRun, EachStoreBugIsFoundByItsDamageOnSomeSeedsAndSafeOnNone) {
  constexpr std::uint32_t seeds = 60;
  for (const auto& [scenario, variant] : std::vector<std::pair<std::string, std::string>>{
           {"store_done_by_room", "B13"},
           {"preempt_offload_reuse", "B14"},
           {"store_writeback_reuse", "B15"}}) {
    SCOPED_TRACE(scenario);
    const scenario_spec& spec = shipped(scenario);
    const std::uint32_t red = damaged_seeds(spec, variant, "I7", seeds * 5);
    EXPECT_GT(red, 0u);
    EXPECT_LT(red, seeds * 5);
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      const one_run green = run(spec, "safe", seed);
      EXPECT_FALSE(green.found) << "seed " << seed << ": " << green.found->message;
    }
  }
}

TEST(DecodeRun, APreemptedRequestResumesAsTheNextGenerationOfItsRoomOnFreshPages) {
  const scenario_spec& spec = shipped("preempt_offload_reuse");
  bool resumed_seen = false;
  for (std::uint64_t seed = 1; seed <= 40 && !resumed_seen; ++seed) {
    const one_run r = run(spec, "safe", seed);
    for (const auto& [rank, running] : decided<core::request_running>(r.events)) {
      if (!running.resumed) continue;
      resumed_seen = true;
      // Its previous incarnation was preempted, and stride keys keep it off other requests'.
      const core::room_key before{running.key.room, running.key.generation - 1};
      bool preempted = false;
      for (const auto& [at, ended] : decided<core::running_request_ended>(r.events)) {
        preempted |= at == rank && ended.key == before && ended.how == core::running_end::preempted;
      }
      EXPECT_TRUE(preempted) << core::to_string(running.key);
      EXPECT_EQ(running.key.generation % spec.engine.generation_stride(), 1u);
    }
  }
  EXPECT_TRUE(resumed_seen);
}

// A store job keeps what its request released: pages a finished request gave back while its
// write-back read them are freed by the job's completion, never before.
TEST(DecodeRun, AWriteBackKeepsTheFinishedRequestsPagesUntilItsCompletion) {
  const one_run r = run(shipped("store_writeback_reuse"), "safe", 3);
  ASSERT_FALSE(r.found);
  const auto started = decided<core::store_job_started>(r.events);
  const auto done = decided<core::store_job_done>(r.events);
  ASSERT_FALSE(started.empty());
  EXPECT_EQ(started.size(), done.size());
  for (const auto& [rank, job] : started) EXPECT_TRUE(job.lease.has_value());
  for (const auto& [rank, completion] : done) EXPECT_TRUE(completion.ended.has_value());
}

TEST(DecodeRun, TheSameSeedWritesTheSameTrace) {
  for (const char* name : {"store_done_by_room", "preempt_offload_reuse", "store_writeback_reuse"}) {
    EXPECT_EQ(run(shipped(name), "safe", 5).trace_digest, run(shipped(name), "safe", 5).trace_digest)
        << name;
    EXPECT_EQ(run(shipped(name), "B13", 7).trace_digest, run(shipped(name), "B13", 7).trace_digest)
        << name;
  }
}

// Without an engine block a scenario's keys and runs are what they were: the stride is 1.
TEST(DecodeRun, NoEngineBlockLeavesGenerationsAsTheyWere) {
  const scenario_spec& spec = shipped("batch_pool_pressure");
  ASSERT_EQ(spec.engine, engine_spec{});
  EXPECT_EQ(spec.engine.generation_stride(), 1u);
  const one_run r = run(spec, "safe", 2);
  EXPECT_TRUE(decided<core::request_running>(r.events).empty());
  EXPECT_TRUE(decided<core::store_job_started>(r.events).empty());
}

}  // namespace
}  // namespace kvsim::scenarios::decode_run_test
