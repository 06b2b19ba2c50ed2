// Pinned timelines (requests[i].pin): a logged incident replays as logged.
// The transfer world gives a pinned request exactly its decode pages, starts it no earlier than
// its submission and aborts it at its time; a pinned page still held is waited for (the event
// loop running, never a refused allocation), and one never freed ends the run in a finding.
// The incidents are examples/incidents/page_overlap.json. Arrivals without a pin
// (requests[i].arrive_at_us, and the requests a scenario's load adds) are read and written
// back as given.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/search/random_walk.h"

namespace kvsim::scenarios::pinned_timeline_test {
namespace {

using nlohmann::json;

const core::room_key request_a{7, 0};
const core::room_key request_b{9, 0};
constexpr core::rank_id prefill_rank = 0;
constexpr core::rank_id decode_rank = 1;
const std::vector<core::page_index> a_pages{3, 4, 5};

const std::vector<scenario_spec>& incidents() {
  static const std::vector<scenario_spec> loaded = load_catalogue(KVSIM_INCIDENTS);
  return loaded;
}

const scenario_spec& incident(const std::string& name) {
  for (const scenario_spec& s : incidents()) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no incident named " + name);
}

// The overlap incident's shape with A's abort left to a deadline that passes before its
// drain-ACK comes (messages are delayed): A is quarantined with page 5, and B, pinned to [5,6]
// and due at once, must wait until the late ACK frees it.
scenario_spec quarantined_overlap() {
  return parse_scenario(json::parse(R"({
    "name": "pinned_wait", "kind": "transfer",
    "topology": {"prefill_ranks": 1, "decode_ranks": 1, "pages_per_rank": 8, "page_bytes": 64},
    "requests": [
      {"room": 7, "pages": 3, "abort": "anytime",
       "pin": {"decode_pages": [3, 4, 5], "abort_at_us": 20}},
      {"room": 9, "pages": 2, "pin": {"decode_pages": [5, 6]}}],
    "faults": {"gates": [{"request": 0, "before_page": 2}], "deadline_us": 1,
               "message_delay": true},
    "expect": {"breaking_variant": "B12", "invariant": "I1"}})"),
                        "test");
}

struct allocation {
  std::vector<core::page_index> pages;
  std::size_t index = 0;  // in the event log
  std::uint64_t time_us = 0;
};

struct replay {
  std::optional<allocation> decode_a, decode_b, prefill_b;
  std::optional<std::uint64_t> a_abort_armed_us;
  std::optional<std::size_t> a_quarantined;  // A's destination lease quarantined (log index)
  std::optional<std::size_t> a_freed_page5;  // A's page 5 back on decode's free list
  int a_writes_into_b = 0;       // A's copies into a decode page B owned at that moment
  int a_writes_into_free = 0;    // A's copies into a decode page nobody owned
  int b_reads_damaged = 0;
  int misuse = 0;                // ledger_misuse events (the world never makes a refused call)
  std::optional<sim::finding> finding;
  std::uint64_t steps = 0;
};

replay run(const scenario_spec& spec, core::variant v, std::uint64_t seed,
           std::optional<properties::checker_family> family) {
  sim::random_walk chooser(seed);
  const auto w = make_scenario_world(spec, v, chooser, seed);
  std::optional<properties::checker_set> checkers;
  if (family) {
    checkers.emplace(properties::liveness_from_us(w->world().faults()), spec.heal_bound_us);
    checkers->attach(w->world(), *family);
  }
  const sim::run_outcome outcome = w->run();
  replay out;
  out.finding = w->world().found();
  out.steps = outcome.steps;
  std::optional<core::room_key> owner_of_page[8];
  const std::vector<sim::sim_event>& events = w->world().events();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const sim::sim_event& e = events[i];
    if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
      const core::event& what = decided->what;
      if (std::holds_alternative<core::ledger_misuse>(what.body)) ++out.misuse;
      if (const auto* allocated = std::get_if<core::pages_allocated>(&what.body)) {
        const allocation a{allocated->pages, i, e.time_us};
        if (what.rank == decode_rank) {
          for (core::page_index p : allocated->pages) owner_of_page[p] = allocated->owner;
          if (allocated->owner == request_a) out.decode_a = a;
          if (allocated->owner == request_b) out.decode_b = a;
        } else if (allocated->owner == request_b) {
          out.prefill_b = a;
        }
      } else if (const auto* freed = std::get_if<core::page_freed>(&what.body);
                 freed != nullptr && what.rank == decode_rank) {
        owner_of_page[freed->page].reset();
        if (freed->page == 5 && freed->owner == request_a) out.a_freed_page5 = i;
      } else if (const auto* armed = std::get_if<core::abort_armed>(&what.body);
                 armed != nullptr && armed->key == request_a && what.rank == decode_rank) {
        out.a_abort_armed_us = e.time_us;
      } else if (const auto* quarantined = std::get_if<core::lease_quarantined>(&what.body);
                 quarantined != nullptr && quarantined->owner == request_a &&
                 what.rank == decode_rank && !out.a_quarantined) {
        out.a_quarantined = i;
      }
    } else if (const auto* copied = std::get_if<sim::transfer_page_copied>(&e.body)) {
      if (copied->owner != request_a || copied->destination_rank != decode_rank) continue;
      const auto& owner = owner_of_page[copied->destination_page];
      out.a_writes_into_b += owner == request_b ? 1 : 0;
      out.a_writes_into_free += owner ? 0 : 1;
    } else if (const auto* read = std::get_if<sim::page_read>(&e.body)) {
      if (read->reader == request_b && !read->intact) ++out.b_reads_damaged;
    }
  }
  return out;
}

TEST(PinnedTimeline, TheIncidentsLoadAndRoundTrip) {
  ASSERT_EQ(incidents().size(), 2u);
  for (const scenario_spec& s : incidents()) {
    EXPECT_EQ(parse_scenario(to_json(s), "round trip"), s) << s.name;
    EXPECT_EQ(s.requests.at(0).pin->decode_pages, a_pages) << s.name;
  }
}

// Safe: every pin is honoured, at its time, and nothing is found.
TEST(PinnedTimeline, DecodeTakesThePinnedPagesAndAbortsAtThePinnedTime) {
  for (const char* name : {"incident_overlap", "incident_disjoint"}) {
    const scenario_spec& spec = incident(name);
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      const replay r = run(spec, core::variant::safe(), seed, properties::checker_family::all);
      EXPECT_FALSE(r.finding) << r.finding->message;
      ASSERT_TRUE(r.decode_a && r.decode_b && r.prefill_b);
      EXPECT_EQ(r.decode_a->pages, a_pages);
      EXPECT_EQ(r.decode_b->pages, spec.requests[1].pin->decode_pages);
      EXPECT_EQ(r.a_abort_armed_us, 40u) << "the abort lands at exactly abort_at_us";
      EXPECT_GE(r.decode_b->time_us, 30u) << "B starts no earlier than its submission";
      EXPECT_GE(r.prefill_b->time_us, 30u) << "on prefill too";
      EXPECT_EQ(r.a_writes_into_b, 0);
      EXPECT_EQ(r.misuse, 0);
    }
  }
}

// B1: decode frees A's pages at the abort, B gets page 5 as logged, and A's stalled write lands
// in it: the damage, named by I1 under the damage checkers.
TEST(PinnedTimeline, UnderB1TheLateWriteLandsInTheOtherRequestsPinnedPage) {
  const scenario_spec& spec = incident("incident_overlap");
  const core::variant b1 = core::variant::with(core::bug::b1_destination_reuse);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const replay bare = run(spec, b1, seed, std::nullopt);  // no checker stops the run
    ASSERT_TRUE(bare.decode_b);
    EXPECT_EQ(bare.decode_b->pages, (std::vector<core::page_index>{5, 6}));
    EXPECT_GE(bare.a_writes_into_b, 1) << "A's resumed copy lands in B's page 5";
    const replay judged = run(spec, b1, seed, properties::checker_family::damage);
    ASSERT_TRUE(judged.finding);
    EXPECT_EQ(judged.finding->invariant, "I1");
    EXPECT_NE(judged.finding->message.find("wrote destination page 5 on rank 1"), std::string::npos)
        << judged.finding->message;
    EXPECT_NE(judged.finding->message.find("allocated to room 9/gen 0"), std::string::npos)
        << judged.finding->message;
  }
}

// The pin is exact: B on [6,7] (pages A never had) is never written by A, though unpinned LIFO
// would have handed it page 5; A's late write lands in its own freed page.
TEST(PinnedTimeline, UnderB1ADisjointPinKeepsTheLateWriteOutOfTheOtherRequest) {
  const scenario_spec& spec = incident("incident_disjoint");
  const core::variant b1 = core::variant::with(core::bug::b1_destination_reuse);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const replay r = run(spec, b1, seed, std::nullopt);
    ASSERT_TRUE(r.decode_b);
    EXPECT_EQ(r.decode_b->pages, (std::vector<core::page_index>{6, 7}));
    EXPECT_EQ(r.a_writes_into_b, 0);
    EXPECT_GE(r.a_writes_into_free, 1);
    EXPECT_EQ(r.b_reads_damaged, 0);
  }
}

// A pinned page still held (A quarantined at its deadline, its drain-ACK late) is waited for
// with decode's event loop running: the late ACK frees page 5 and only then does B get it.
// Decode reads its ledger first, so no refused allocation (misuse) is ever made.
TEST(PinnedTimeline, APinnedPageStillHeldIsWaitedForUntilItIsFree) {
  const scenario_spec spec = quarantined_overlap();
  int waited = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const replay r = run(spec, core::variant::safe(), seed, properties::checker_family::all);
    EXPECT_FALSE(r.finding) << r.finding->message;
    EXPECT_EQ(r.misuse, 0);
    ASSERT_TRUE(r.decode_b && r.a_freed_page5);
    EXPECT_EQ(r.decode_b->pages, (std::vector<core::page_index>{5, 6}));
    EXPECT_LT(*r.a_freed_page5, r.decode_b->index) << "B got page 5 only once A's had gone back";
    // Quarantined first: decode was done with A and due to start B while page 5 was held.
    if (r.a_quarantined && *r.a_quarantined < *r.a_freed_page5) ++waited;
  }
  EXPECT_GT(waited, 0) << "no seed quarantined A before B was due: the wait was never exercised";
}

// A pinned page that is never freed (B5: the cleared room drops decode's ACK target, so A
// stays quarantined for good) ends the run with a finding whose wait-for lines name the page,
// within the step limit: not a hang.
TEST(PinnedTimeline, APinnedPageNeverFreedEndsTheRunInAFinding) {
  const scenario_spec spec = quarantined_overlap();
  const core::variant b5 = core::variant::with(core::bug::b5_lost_ack_target);
  int named = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const replay r = run(spec, b5, seed, properties::checker_family::all);
    EXPECT_LE(r.steps, spec.step_limit);
    if (r.decode_b) continue;  // this seed's ACK came before the abort's target was lost
    ASSERT_TRUE(r.finding) << "seed " << seed << ": B never got its pages, and nothing was found";
    for (const std::string& line : r.finding->details) {
      if (line.find("waits on pinned page 5 for room 9/gen 0 (still room 7/gen 0's on rank 1)") !=
          std::string::npos) {
        ++named;
        break;
      }
    }
  }
  EXPECT_GT(named, 0);
}

// --- arrivals: requests[i].arrive_at_us and a scenario's load --------------------------------

// A transfer scenario of two listed requests (rooms 42) and what `extra` adds to it.
scenario_spec with_arrivals(const json& extra) {
  json scenario = json::parse(R"({
    "name": "arrivals", "kind": "transfer",
    "topology": {"prefill_ranks": 1, "decode_ranks": 2, "pages_per_rank": 8},
    "requests": [{"room": 42, "abort": "during_transfer"}, {"room": 42, "after": 0}],
    "expect": {"breaking_variant": "B1", "invariant": "I3"}})");
  scenario.update(extra, true);
  // Through text, as a catalogue is read: a number built in C++ is signed, one parsed unsigned.
  return parse_scenario(json::parse(scenario.dump()), "test");
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

TEST(Arrivals, ALoadAddsItsRequestsAfterTheListedOnesRoomsCycledTheKthAborted) {
  const scenario_spec s = with_arrivals(json::parse(R"({"load": {
      "count": 7, "first_arrival_us": 3, "inter_arrival_us": 10, "pages": 3, "chunks": 2,
      "rooms": 3, "abort": "before_transfer", "abort_every": 3}})"));
  ASSERT_EQ(s.requests.size(), 9u);
  EXPECT_FALSE(s.requests[0].arrive_at_us);  // the listed requests are as listed
  EXPECT_EQ(s.requests[1].after, 0u);
  for (std::uint32_t i = 0; i < 7; ++i) {
    const request_spec& r = s.requests[2 + i];
    EXPECT_EQ(r.room, 43u + i % 3) << i;  // after the largest listed room, 3 ids cycled
    EXPECT_EQ(r.arrive_at_us, 3u + 10u * i) << i;
    EXPECT_EQ(r.pages, 3u) << i;
    EXPECT_EQ(r.chunks, 2u) << i;
    EXPECT_FALSE(r.after) << i;
    // The 3rd and the 6th: every 3rd request, aborted by every decode rank.
    const bool aborted = i == 2 || i == 5;
    EXPECT_EQ(r.abort, aborted ? std::optional(abort_phase::before_transfer) : std::nullopt) << i;
    EXPECT_TRUE(r.abort_from.empty()) << i;
  }
}

TEST(Arrivals, ALoadMayStandForTheRequestsAndTakesItsDefaults) {
  const scenario_spec s = with_arrivals(json{{"requests", json::array()}, {"load", {{"count", 3}}}});
  ASSERT_EQ(s.requests.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    request_spec expected;  // a request's defaults, its own room from 1 on, arriving at 0
    expected.room = 1 + i;
    expected.arrive_at_us = 0;
    EXPECT_EQ(s.requests[i], expected) << i;
  }
  // Without a load an empty list is still refused.
  EXPECT_THROW(with_arrivals(json{{"requests", json::array()}}), catalogue_error);
}

TEST(Arrivals, ALoadsRoomsRunUpToTheLargestIdAndNoFurther) {
  constexpr core::room_id last = std::numeric_limits<core::room_id>::max();
  const scenario_spec s = with_arrivals(json{{"load", {{"count", 2}, {"first_room", last - 1}}}});
  EXPECT_EQ(s.requests[2].room, last - 1);
  EXPECT_EQ(s.requests[3].room, last);
  EXPECT_THROW(with_arrivals(json{{"load", {{"count", 2}, {"first_room", last}}}}),
               catalogue_error);
  // A listed request on the largest id: the load's rooms cannot follow it (they wrapped around
  // to 0 once), so the load must say where they start.
  json extra{{"requests", {{{"room", last}}}}, {"load", {{"count", 2}}}};
  try {
    with_arrivals(extra);
    ADD_FAILURE() << "no error";
  } catch (const catalogue_error& e) {
    EXPECT_EQ(e.problem(), catalogue_problem::out_of_range);
    EXPECT_NE(std::string(e.what()).find("field 'load.first_room' must be given"),
              std::string::npos)
        << e.what();
  }
  extra["load"]["first_room"] = 0;
  EXPECT_EQ(with_arrivals(extra).requests[1].room, 0u);
}

// Equal times are in order; an arrival before an earlier request's (arrive_at_us or a pinned
// submission) is refused: every rank admits requests in index order.
TEST(Arrivals, ArrivalsFollowTheRequestsOrder) {
  EXPECT_NO_THROW(with_arrivals(json::parse(R"({"requests": [
      {"room": 1, "arrive_at_us": 5}, {"room": 2}, {"room": 3, "arrive_at_us": 5},
      {"room": 4, "pin": {"submit_at_us": 9}}], "load": {"count": 2, "first_arrival_us": 9}})")));
  EXPECT_THROW(with_arrivals(json::parse(R"({"requests": [{"room": 1, "arrive_at_us": 10}],
      "load": {"count": 2, "first_arrival_us": 9}})")), catalogue_error);
  EXPECT_THROW(with_arrivals(json::parse(R"({"requests": [{"room": 1, "pin": {"submit_at_us": 10}},
      {"room": 2, "arrive_at_us": 9}]})")), catalogue_error);
}

// to_json writes the load as the requests it added: the written scenario parses to the same
// scenario_spec, and is what to_json writes for that one again.
TEST(Arrivals, ManyRequestsAtOnceRoundTripThroughToJson) {
  const scenario_spec s = with_arrivals(json::parse(R"({
      "topology": {"prefill_ranks": 1, "decode_ranks": 2, "concurrency": 4,
                   "pages_by_rank": [16, 8, 12]},
      "requests": [{"room": 42, "abort": "during_transfer", "arrive_at_us": 2},
                   {"room": 42, "after": 0, "arrive_at_us": 7}],
      "load": {"count": 5, "first_arrival_us": 7, "inter_arrival_us": 4, "rooms": 2,
               "abort": "anytime", "abort_every": 2}})"));
  EXPECT_EQ(s.topology.concurrency, 4u);
  EXPECT_EQ(s.topology.pages_by_rank, (std::vector<std::uint32_t>{16, 8, 12}));
  const json written = to_json(s);
  EXPECT_FALSE(written.contains("load"));
  ASSERT_EQ(written["requests"].size(), 7u);
  EXPECT_EQ(written["topology"]["concurrency"], 4);
  EXPECT_EQ(written["topology"]["pages_by_rank"], json::array({16, 8, 12}));
  EXPECT_EQ(written["requests"][6]["arrive_at_us"], 7 + 4 * 4);
  const scenario_spec again = parse_scenario(written, "round trip");
  EXPECT_EQ(again, s);
  EXPECT_EQ(to_json(again), written);
}

// A scenario without the fields of many requests at once is written with the keys it always
// had, so catalogues and traces written before them read and compare the same.
TEST(Arrivals, AScenarioWithoutThemIsWrittenWithTheKeysOfBefore) {
  const json written = to_json(with_arrivals(json::object()));
  EXPECT_EQ(keys(written), (std::set<std::string>{"name", "description", "kind", "topology",
                                                  "requests", "faults", "expect", "step_limit",
                                                  "heal_bound_us"}));
  EXPECT_EQ(keys(written["topology"]),
            (std::set<std::string>{"prefill_ranks", "decode_ranks", "attention_group",
                                   "pages_per_rank", "page_bytes", "tombstones"}));
  EXPECT_EQ(keys(written["requests"][0]), (std::set<std::string>{"room", "pages", "chunks",
                                                                  "siblings", "origin",
                                                                  "abort_from", "abort"}));
  EXPECT_EQ(keys(written["requests"][1]), (std::set<std::string>{"room", "pages", "chunks",
                                                                  "siblings", "origin",
                                                                  "abort_from", "after"}));
  // concurrency 1 and no pools of their own are the defaults: not written either.
  const json defaults = to_json(with_arrivals(json{{"topology", {{"concurrency", 1}}}}));
  EXPECT_EQ(defaults, written);
}

}  // namespace
}  // namespace kvsim::scenarios::pinned_timeline_test
