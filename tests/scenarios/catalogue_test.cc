// The shipped catalogue (scenarios/catalogue.json): it loads, round-trips through to_json,
// and holds the named scenarios with the variant that breaks each and the invariant that
// must fire. Bad input is covered by catalogue_errors_test.cc.
#include "spec/catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/variant.h"

namespace kvsim::scenarios::catalogue_test {
namespace {

using nlohmann::json;

const std::vector<scenario_spec>& shipped() {
  static const std::vector<scenario_spec> catalogue = load_catalogue(KVSIM_CATALOGUE);
  return catalogue;
}

const scenario_spec& named(const std::string& name) {
  const auto& all = shipped();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const scenario_spec& s) { return s.name == name; });
  if (it == all.end()) throw std::runtime_error("no scenario named " + name);
  return *it;
}

TEST(ShippedCatalogue, LoadsWithUniqueNames) {
  ASSERT_NO_THROW(shipped());
  EXPECT_EQ(shipped().size(), 29u);
  std::set<std::string> names;
  for (const auto& s : shipped()) EXPECT_TRUE(names.insert(s.name).second) << s.name;
}

TEST(ShippedCatalogue, EveryScenarioRoundTripsThroughToJson) {
  for (const auto& s : shipped()) {
    const json written = to_json(s);
    const scenario_spec again = parse_scenario(written, "round trip");
    EXPECT_EQ(again, s) << s.name << ": " << written.dump();
    EXPECT_EQ(to_json(again), written) << s.name;
  }
  EXPECT_EQ(parse_catalogue(catalogue_to_json(shipped()).dump(2), "round trip"), shipped());
}

TEST(ShippedCatalogue, HoldsEveryRequiredScenarioWithItsExpectation) {
  struct expected {
    const char* name;
    const char* variant;
    const char* invariant;
  };
  const std::vector<expected> table = {
      {"page42", "B1", "I3"},
      {"b2_early_ack", "B2", "I2"},
      {"b3_source_reuse", "B3", "I1"},
      {"b4_sibling_futures", "B4", "I1"},
      {"b5_lost_ack_target", "B5", "I9"},
      {"b6_mla_fanout", "B6", "I9"},
      {"b7_cleared_room", "B7", "I2"},
      {"b8_prefill_failure", "B8", "I1"},
      {"b9_ack_before_failed", "B9", "I2"},
      {"b10_abort_before_open", "B10", "I2"},
      {"b11_stale_ack", "B11", "I3"},
      {"b12_deadline", "B12", "I1"},
      {"hicache_local_missing", "H1", "I5"},
      {"hicache_local_pending", "H1", "I5"},
      {"hicache_local_active", "H2", "I6"},
      {"h3_skip_reduce", "H3", "I5"},
      {"canary", "canary", "I3"},
  };
  for (const auto& e : table) {
    SCOPED_TRACE(e.name);
    ASSERT_NO_THROW(named(e.name));
    EXPECT_EQ(named(e.name).expect.breaking_variant, e.variant);
    EXPECT_EQ(named(e.name).expect.invariant, e.invariant);
  }
}

TEST(ShippedCatalogue, EveryBugOfDomainMdHasAScenarioThatBreaksIt) {
  for (std::size_t i = 0; i < core::bug_count; ++i) {
    const std::string bug = core::to_string(static_cast<core::bug>(i));
    EXPECT_TRUE(std::any_of(shipped().begin(), shipped().end(),
                            [&](const scenario_spec& s) { return s.expect.breaking_variant == bug; }))
        << bug;
  }
}

TEST(ShippedCatalogue, EveryDescriptionIsOneLineCitingItsBug) {
  for (const auto& s : shipped()) {
    EXPECT_NE(s.description.find("DOMAIN.md"), std::string::npos) << s.name;
    const std::string cited =
        s.expect.breaking_variant == "canary" ? "anary" : s.expect.breaking_variant + " ";
    EXPECT_NE(s.description.find(cited), std::string::npos) << s.name << ": " << s.description;
    EXPECT_EQ(s.description.find('\n'), std::string::npos) << s.name;
  }
}

TEST(ShippedCatalogue, ScenariosAreSmall) {
  for (const auto& s : shipped()) {
    SCOPED_TRACE(s.name);
    EXPECT_LE(s.topology.prefill_ranks, 2u);
    EXPECT_LE(s.topology.decode_ranks, 2u);
    EXPECT_LE(s.topology.pages_per_rank, 8u);
    EXPECT_EQ(s.topology.page_bytes, 64u);
    if (s.topology.concurrency > 1) {
      // Load is the point of a scenario that serves requests at once: at most 64 of them,
      // with pools sized for the load (one rank's short of it).
      EXPECT_LE(s.requests.size(), 64u);
      for (const std::uint32_t pool : s.topology.pages_by_rank) EXPECT_LE(pool, 160u);
      continue;
    }
    // One request and the one reusing its room, except where churn is the point: room_churn
    // cycles three room ids through a 2-entry tombstone table.
    EXPECT_LE(s.requests.size(), s.name == "room_churn" ? 9u : 2u);
  }
}

TEST(ShippedCatalogue, Page42IsTheSeedsRedGreen) {
  const scenario_spec& s = named("page42");
  EXPECT_EQ(s.kind, scenario_kind::transfer);
  EXPECT_EQ(s.topology.prefill_ranks, 1u);
  EXPECT_EQ(s.topology.decode_ranks, 1u);
  ASSERT_EQ(s.requests.size(), 2u);
  const request_spec& a = s.requests[0];
  const request_spec& b = s.requests[1];
  EXPECT_EQ(a.room, 42u);
  EXPECT_EQ(a.pages, 2u);
  EXPECT_EQ(a.abort, abort_phase::during_transfer);
  EXPECT_EQ(a.origin, abort_origin::decode);
  EXPECT_EQ(b.room, 42u);
  EXPECT_EQ(b.abort, std::nullopt);
  EXPECT_EQ(b.after, 0u);
  ASSERT_EQ(s.faults.gates.size(), 1u);
  EXPECT_EQ(s.faults.gates[0].request, 0u);
  EXPECT_EQ(s.faults.gates[0].before_page, 1u);
}

TEST(ShippedCatalogue, HicacheScenariosGiveEachRanksLocalState) {
  using core::prefetch_state;
  const auto states = [](const char* name) { return named(name).faults.prefetch_states; };
  EXPECT_EQ(states("hicache_local_missing"),
            (std::vector{prefetch_state::missing, prefetch_state::active}));
  EXPECT_EQ(states("hicache_local_pending"),
            (std::vector{prefetch_state::pending, prefetch_state::active}));
  EXPECT_EQ(states("hicache_local_active"),
            (std::vector{prefetch_state::active, prefetch_state::active}));
  for (const char* name : {"hicache_local_missing", "hicache_local_pending",
                           "hicache_local_active", "h3_skip_reduce"}) {
    EXPECT_EQ(named(name).kind, scenario_kind::prefetch) << name;
    EXPECT_EQ(named(name).topology.attention_group, 2u) << name;
  }
}

TEST(ShippedCatalogue, BugScenariosSetUpTheirHazard) {
  const scenario_spec& fanout = named("b6_mla_fanout");
  EXPECT_EQ(fanout.topology.decode_ranks, 2u);
  EXPECT_EQ(fanout.requests.at(0).abort_from, (std::vector<core::rank_id>{0, 1}));
  EXPECT_EQ(named("b8_prefill_failure").requests.at(0).origin, abort_origin::prefill);
  EXPECT_EQ(named("b10_abort_before_open").requests.at(0).abort, abort_phase::before_open);
  const scenario_spec& stale = named("b11_stale_ack");
  ASSERT_EQ(stale.requests.size(), 2u);
  EXPECT_EQ(stale.requests[0].room, stale.requests[1].room);
  EXPECT_TRUE(stale.requests[0].abort.has_value());
  EXPECT_TRUE(stale.faults.on(fault_kind::message_delay));
  EXPECT_TRUE(stale.faults.on(fault_kind::message_duplicate));
  const scenario_spec& deadline = named("b12_deadline");
  EXPECT_TRUE(deadline.faults.on(fault_kind::transfer_timeout_unconfirmed));
  EXPECT_TRUE(deadline.faults.deadline_us.has_value());
  EXPECT_EQ(named("b4_sibling_futures").requests.at(0).siblings, 2u);
}

// --- the schema's defaults and names ----------------------------------------------------------

TEST(ScenarioJson, OptionalFieldsTakeTheDefaultsOfScenarioSpec) {
  const json minimal = json::parse(R"({
    "name": "minimal", "kind": "transfer", "topology": {},
    "requests": [{"room": 7}],
    "expect": {"breaking_variant": "B1", "invariant": "I1"}})");
  scenario_spec expected;
  expected.name = "minimal";
  request_spec request;
  request.room = 7;
  expected.requests.push_back(request);
  expected.expect = {"B1", "I1"};
  EXPECT_EQ(parse_scenario(minimal, "test"), expected);
}

TEST(ScenarioJson, ToJsonWritesEveryFieldAndOmitsOnlyEmptyOptionals) {
  const json written = to_json(named("b12_deadline"));
  for (const char* key : {"name", "description", "kind", "topology", "requests", "faults",
                          "expect", "step_limit", "heal_bound_us"}) {
    EXPECT_TRUE(written.contains(key)) << key;
  }
  EXPECT_EQ(written["topology"].size(), 6u);
  EXPECT_EQ(written["faults"]["deadline_us"], 500);
  EXPECT_EQ(written["requests"][0]["abort"], "during_transfer");
  EXPECT_FALSE(written["requests"][0].contains("after"));
  EXPECT_EQ(written["requests"][1]["after"], 0);
  EXPECT_FALSE(written["requests"][1].contains("abort"));
  EXPECT_FALSE(to_json(named("page42"))["faults"].contains("deadline_us"));
}

// A pin is written with exactly the fields it has, reads back the same, and a request without
// one is written as before: no "pin" key, so every catalogue, trace and digest written before
// pins existed stays byte for byte what it was.
TEST(ScenarioJson, APinRoundTripsAndIsWrittenOnlyWhereGiven) {
  scenario_spec s = named("page42");
  s.requests[0].abort = abort_phase::anytime;
  s.requests[0].pin = request_pin{{3, 4}, 0, 40};
  s.requests[1].pin = request_pin{{4, 6}, 30, std::nullopt};
  const json written = to_json(s);
  EXPECT_EQ(written["requests"][0]["pin"],
            json::parse(R"({"decode_pages": [3, 4], "submit_at_us": 0, "abort_at_us": 40})"));
  EXPECT_EQ(written["requests"][1]["pin"],
            json::parse(R"({"decode_pages": [4, 6], "submit_at_us": 30})"));
  EXPECT_EQ(parse_scenario(written, "round trip"), s);
  s.requests[1].pin = request_pin{{}, 30, std::nullopt};  // times only
  EXPECT_EQ(to_json(s)["requests"][1]["pin"], json::parse(R"({"submit_at_us": 30})"));
  EXPECT_EQ(parse_scenario(to_json(s), "round trip"), s);
  s.requests[0].pin.reset();
  s.requests[1].pin.reset();
  s.requests[0].abort = abort_phase::during_transfer;
  EXPECT_EQ(to_json(s).dump(), to_json(named("page42")).dump());
  // Written with a pin exactly where the scenario has one (only pinned_overlap ships pins).
  // The document is kept alive: a range-for over to_json(spec)["requests"] would iterate
  // a destroyed temporary (C++20 extends only the range's own lifetime).
  for (const scenario_spec& spec : shipped()) {
    const json document = to_json(spec);
    const json& requests = document.at("requests");
    ASSERT_EQ(requests.size(), spec.requests.size()) << spec.name;
    for (std::size_t i = 0; i < spec.requests.size(); ++i) {
      EXPECT_EQ(requests[i].contains("pin"), spec.requests[i].pin.has_value()) << spec.name;
    }
  }
}

// SCHEMA.md's example is page42 exactly as to_json writes it: the document cannot drift.
TEST(ScenarioJson, TheSchemaExampleIsWhatToJsonWritesForPage42) {
  const auto schema = std::filesystem::path(KVSIM_CATALOGUE).parent_path() / "SCHEMA.md";
  std::ifstream in(schema);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t start = text.find("```json\n");
  ASSERT_NE(start, std::string::npos) << schema;
  const std::size_t end = text.find("```", start + 8);
  ASSERT_NE(end, std::string::npos);
  const json example = json::parse(text.substr(start + 8, end - start - 8));
  EXPECT_EQ(example, to_json(named("page42")));
  EXPECT_EQ(parse_scenario(example, "SCHEMA.md"), named("page42"));
}

TEST(ScenarioJson, EnumsPrintTheirCatalogueNames) {
  EXPECT_STREQ(to_string(scenario_kind::transfer), "transfer");
  EXPECT_STREQ(to_string(scenario_kind::prefetch), "prefetch");
  EXPECT_STREQ(to_string(abort_phase::before_open), "before_open");
  EXPECT_STREQ(to_string(abort_phase::before_transfer), "before_transfer");
  EXPECT_STREQ(to_string(abort_phase::during_transfer), "during_transfer");
  EXPECT_STREQ(to_string(abort_phase::after_transfer), "after_transfer");
  EXPECT_STREQ(to_string(abort_phase::anytime), "anytime");
  // The catalogue spells prefetch states as the core does.
  EXPECT_EQ(to_json(named("hicache_local_pending"))["faults"]["prefetch_states"],
            (json::array({core::to_string(core::prefetch_state::pending),
                          core::to_string(core::prefetch_state::active)})));
}

}  // namespace
}  // namespace kvsim::scenarios::catalogue_test
