// The safe core against scenarios nobody wrote: RapidCheck draws scenarios from the catalogue
// schema (ranks, requests with room-id reuse, aborts at every phase from either side, transfer
// gates, stalls, failures, timeouts, message delay, duplication and loss, deadlines, HiCache
// states), and a bounded random search over each must find nothing. A failure shrinks to a
// small scenario (RapidCheck shrinks every drawn field), is written as a one-scenario
// catalogue, and the message says how to replay it with the kvsim command.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>

#include "properties/all_checkers.h"
#include "scenarios/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/random_walk.h"

namespace kvsim::scenarios {

// RapidCheck prints a counterexample through showValue: the scenario in the catalogue's own
// JSON, so a shrunk failure reads like a catalogue entry.
void showValue(const scenario_spec& spec, std::ostream& os) { os << to_json(spec).dump(2); }

namespace {

constexpr std::uint64_t seeds_per_scenario = 12;

rc::Gen<abort_phase> any_phase() {
  return rc::gen::element(abort_phase::before_open, abort_phase::before_transfer,
                          abort_phase::during_transfer, abort_phase::after_transfer,
                          abort_phase::anytime);
}

request_spec transfer_request(const topology_spec& topology, std::size_t index) {
  request_spec r;
  r.room = *rc::gen::inRange<core::room_id>(1, 4);  // three ids for up to three requests: reuse
  r.pages = *rc::gen::inRange<std::uint32_t>(1, std::min<std::uint32_t>(3, topology.pages_per_rank) + 1);
  r.chunks = *rc::gen::inRange<std::uint32_t>(1, r.pages + 1);
  r.siblings = *rc::gen::inRange<std::uint32_t>(1, 3);
  if (*rc::gen::arbitrary<bool>()) {
    r.abort = *any_phase();
    r.origin = *rc::gen::element(abort_origin::decode, abort_origin::prefill);
    if (r.origin == abort_origin::decode && topology.decode_ranks > 1 &&
        *rc::gen::arbitrary<bool>()) {
      r.abort_from.push_back(*rc::gen::inRange<core::rank_id>(0, topology.decode_ranks));
    }
  }
  if (index > 0 && *rc::gen::arbitrary<bool>()) {
    r.after = *rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(index));
  }
  return r;
}

scenario_spec transfer_scenario() {
  scenario_spec s;
  s.kind = scenario_kind::transfer;
  s.topology.prefill_ranks = *rc::gen::inRange<std::uint32_t>(1, 3);
  s.topology.decode_ranks = *rc::gen::inRange<std::uint32_t>(1, 3);
  s.topology.pages_per_rank = *rc::gen::inRange<std::uint32_t>(3, 9);
  const std::size_t requests = *rc::gen::inRange<std::size_t>(1, 4);
  for (std::size_t i = 0; i < requests; ++i) s.requests.push_back(transfer_request(s.topology, i));
  fault_spec& f = s.faults;
  if (*rc::gen::arbitrary<bool>()) {
    const auto request = *rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(requests));
    f.gates.push_back({request, *rc::gen::inRange<std::uint32_t>(0, s.requests[request].pages)});
  }
  f.transfer_stall = *rc::gen::arbitrary<bool>();
  f.transfer_fail = *rc::gen::arbitrary<bool>();
  f.transfer_timeout_unconfirmed = *rc::gen::arbitrary<bool>();
  f.message_delay = *rc::gen::arbitrary<bool>();
  f.message_duplicate = *rc::gen::arbitrary<bool>();
  f.message_drop = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) f.deadline_us = *rc::gen::inRange<std::uint64_t>(20, 400);
  s.expect = {"B1", "I3"};  // required by the schema; this property expects nothing to fire
  return s;
}

scenario_spec prefetch_scenario() {
  scenario_spec s;
  s.kind = scenario_kind::prefetch;
  s.topology.attention_group = *rc::gen::inRange<std::uint32_t>(1, 5);
  s.topology.pages_per_rank = *rc::gen::inRange<std::uint32_t>(2, 9);
  const std::size_t requests = *rc::gen::inRange<std::size_t>(1, 4);
  for (std::size_t i = 0; i < requests; ++i) {
    request_spec r;
    r.room = *rc::gen::inRange<core::room_id>(1, 4);
    r.pages = *rc::gen::inRange<std::uint32_t>(1, s.topology.pages_per_rank + 1);
    if (*rc::gen::arbitrary<bool>()) r.abort = *any_phase();
    s.requests.push_back(r);
  }
  for (std::uint32_t rank = 0; rank < s.topology.attention_group; ++rank) {
    s.faults.prefetch_states.push_back(*rc::gen::element(
        core::prefetch_state::missing, core::prefetch_state::pending, core::prefetch_state::active));
  }
  s.faults.transfer_stall = *rc::gen::arbitrary<bool>();  // storage reads stall
  s.faults.transfer_fail = *rc::gen::arbitrary<bool>();   // storage reads fail
  s.expect = {"H1", "I5"};
  return s;
}

rc::Gen<scenario_spec> random_scenario() {
  return rc::gen::exec([] {
    scenario_spec s = *rc::gen::arbitrary<bool>() ? prefetch_scenario() : transfer_scenario();
    s.name = "random";
    s.description = "drawn by tests/scenarios/random_scenario_property_test.cc";
    return s;
  });
}

// The first seed whose run gives a finding, if any, within the bound.
std::optional<std::pair<std::uint64_t, sim::finding>> bounded_search(const scenario_spec& spec,
                                                                      core::variant v) {
  for (std::uint64_t seed = 1; seed <= seeds_per_scenario; ++seed) {
    sim::random_walk chooser(seed);
    const auto w = make_scenario_world(spec, v, chooser, seed);
    properties::checker_set checkers(0, spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    if (w->world().found()) return std::pair{seed, *w->world().found()};
  }
  return std::nullopt;
}

std::filesystem::path failure_file() {
  return std::filesystem::path(::testing::TempDir()) / "kvsim_random_scenario_failure.json";
}

void check_clean(const scenario_spec& spec, core::variant v) {
  // Every drawn scenario is one the catalogue accepts: the schema, not the generator, is the
  // contract (and the JSON round trip is exact).
  RC_ASSERT(parse_scenario(to_json(spec), "generated") == spec);
  const auto found = bounded_search(spec, v);
  if (!found) return;
  const std::filesystem::path file = failure_file();
  std::ofstream(file) << catalogue_to_json({spec}).dump(2) << "\n";
  RC_FAIL(found->second.invariant + " at seed " + std::to_string(found->first) + ": " +
          found->second.message + "\n  scenario written to " + file.string() +
          "\n  replay: build/bin/kvsim run --catalogue " + file.string() +
          " --scenario random --variant " + v.name() + " --seed " + std::to_string(found->first));
}

RC_GTEST_PROP(RandomScenarios, TheSafeCoreShowsNoFindingUnderABoundedSearch, ()) {
  check_clean(*random_scenario(), core::variant::safe());
}

// Red before green: the same property over a deliberately broken core (decode frees its pages
// at abort, B1) must fail, and the shrunk scenario must be small.
TEST(RandomScenarios, ABrokenCoreIsCaughtAndShrunkToASmallScenario) {
  const auto result = rc::detail::checkTestable([] {
    check_clean(*random_scenario(), core::variant::with(core::bug::b1_destination_reuse));
  });
  ASSERT_TRUE(result.template is<rc::detail::FailureResult>())
      << "the property did not notice a core that frees destination pages at abort";
  const auto failure = result.template get<rc::detail::FailureResult>();
  std::string shown;
  for (const auto& [type, value] : failure.counterExample) shown += value + "\n";
  std::cout << "shrunk counterexample:\n" << shown << failure.description << "\n";
  EXPECT_NE(failure.description.find("replay: build/bin/kvsim run --catalogue"), std::string::npos);
  const scenario_spec shrunk = load_catalogue(failure_file()).at(0);
  EXPECT_EQ(shrunk.kind, scenario_kind::transfer);
  EXPECT_LE(shrunk.requests.size(), 2u) << shown;
  EXPECT_EQ(shrunk.topology.prefill_ranks, 1u) << shown;
  EXPECT_EQ(shrunk.topology.decode_ranks, 1u) << shown;
}

}  // namespace
}  // namespace kvsim::scenarios
