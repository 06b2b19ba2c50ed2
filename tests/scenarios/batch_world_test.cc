// Transfer worlds that serve many requests at once (topology.concurrency > 1): the rules of
// admission a user relies on (`after`, a room's generations in order), what makes a batch a
// batch (a rank's rooms open side by side), and determinism (the same seed writes the same
// trace, byte for byte, in every build type: the golden digests below are checked by the
// default and the sanitizer builds alike).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tests/support/fnv1a.h"
#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/decision.h"
#include "sim/run_trace.h"
#include "sim/search/random_walk.h"
#include "sim/trace.h"

namespace kvsim::scenarios::batch_world_test {
namespace {

using nlohmann::json;
using kvsim::testing::fnv1a;

struct one_run {
  std::uint64_t decision_hash = 0;
  std::uint64_t trace_digest = 0;
  std::optional<sim::finding> found;
  std::vector<sim::sim_event> events;
};

one_run run(const scenario_spec& spec, const std::string& variant, std::uint64_t seed) {
  sim::random_walk chooser(seed);
  const sim::fault_profile faults = sim::fault_profile::draw(seed, allowed_faults(spec));
  const auto w = make_scenario_world(spec, *variant_from_name(variant), chooser, faults);
  properties::checker_set checkers(properties::liveness_from_us(faults), spec.heal_bound_us);
  checkers.attach(w->world());
  w->run();
  const sim::trace t = sim::capture_trace(w->world(), to_json(spec), variant, chooser.name(), seed);
  return {sim::decision_hash(w->world().decisions()), fnv1a(sim::to_json(t).dump()),
          w->world().found(), w->world().events()};
}

const scenario_spec& shipped(const std::string& name) {
  static const std::vector<scenario_spec> all = load_catalogue(KVSIM_CATALOGUE);
  for (const scenario_spec& s : all) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no scenario " + name);
}

// Two requests on rooms 1 and 2 at one prefill and one decode rank serving both at once.
scenario_spec two_at_once(bool second_after_first, bool same_room) {
  json requests = json::array({json{{"room", 1}, {"pages", 2}, {"chunks", 2}},
                               json{{"room", same_room ? 1 : 2}, {"pages", 2}, {"chunks", 2}}});
  if (second_after_first) requests[1]["after"] = 0;
  const json scenario{{"name", "two_at_once"},
                      {"kind", "transfer"},
                      {"topology", {{"prefill_ranks", 1}, {"decode_ranks", 1}, {"concurrency", 2}}},
                      {"requests", requests},
                      {"expect", {{"breaking_variant", "B1"}, {"invariant", "I3"}}}};
  return parse_scenario(json::parse(scenario.dump()), "batch_world_test");
}

// Where in the run each room was opened and finished on the prefill rank (rank 0): event
// indices, in the order the events were logged.
struct prefill_books {
  std::map<core::room_key, std::size_t> opened;
  std::map<core::room_key, std::size_t> finished;
};

prefill_books books_of(const std::vector<sim::sim_event>& events) {
  prefill_books books;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto* decided = std::get_if<sim::core_decided>(&events[i].body);
    if (decided == nullptr || decided->what.rank != 0) continue;
    if (const auto* o = std::get_if<core::room_opened>(&decided->what.body)) books.opened[o->key] = i;
    if (const auto* f = std::get_if<core::request_finished>(&decided->what.body)) books.finished[f->key] = i;
  }
  return books;
}

constexpr std::uint64_t seeds = 60;

TEST(BatchWorld, WithoutAfterARanksRoomsOpenSideBySide) {
  const scenario_spec spec = two_at_once(false, false);
  int overlapped = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const one_run r = run(spec, "safe", seed);
    ASSERT_FALSE(r.found) << r.found->message;
    const prefill_books books = books_of(r.events);
    ASSERT_EQ(books.opened.size(), 2u);
    const core::room_key first{1, 0};
    const core::room_key second{2, 0};
    overlapped += books.opened.at(second) < books.finished.at(first) &&
                  books.opened.at(first) < books.finished.at(second);
  }
  EXPECT_GT(overlapped, 0) << "two requests of one rank never ran at once";
}

TEST(BatchWorld, AfterHoldsARequestUntilTheOneItNamesEnded) {
  const scenario_spec with_after = two_at_once(true, false);
  const scenario_spec without = two_at_once(false, false);
  int differ = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const one_run r = run(with_after, "safe", seed);
    ASSERT_FALSE(r.found) << r.found->message;
    const prefill_books books = books_of(r.events);
    EXPECT_GT(books.opened.at({2, 0}), books.finished.at({1, 0})) << "seed " << seed;
    differ += r.decision_hash != run(without, "safe", seed).decision_hash;
  }
  EXPECT_GT(differ, 0) << "`after` changed nothing a user can see";
}

TEST(BatchWorld, ARoomsGenerationsOpenInOrder) {
  const scenario_spec spec = two_at_once(false, true);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const one_run r = run(spec, "safe", seed);
    ASSERT_FALSE(r.found) << r.found->message;
    const prefill_books books = books_of(r.events);
    EXPECT_GT(books.opened.at({1, 1}), books.finished.at({1, 0})) << "seed " << seed;
  }
}

// batch_pool_pressure, B1, seed 2: the destination-reuse finding under load.
constexpr std::uint64_t golden_seed = 2;
constexpr std::uint64_t golden_decision_hash = 0xaad377cce25173b4;
// The trace carries the kvsim version: a version bump changes this digest too.
constexpr std::uint64_t golden_trace_digest = 0xa6d274a68fbc31c7;

TEST(BatchWorld, TheSameSeedWritesTheSameTraceInEveryBuildType) {
  const scenario_spec& spec = shipped("batch_pool_pressure");
  const one_run first = run(spec, "B1", golden_seed);
  const one_run again = run(spec, "B1", golden_seed);
  ASSERT_TRUE(first.found);
  EXPECT_EQ(first.decision_hash, again.decision_hash);
  EXPECT_EQ(first.trace_digest, again.trace_digest);
  EXPECT_EQ(first.decision_hash, golden_decision_hash);
  EXPECT_EQ(first.trace_digest, golden_trace_digest);
}

}  // namespace
}  // namespace kvsim::scenarios::batch_world_test
