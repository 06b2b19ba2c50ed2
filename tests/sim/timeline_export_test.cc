// The timeline export on real runs of catalogue scenarios (safe, bug variants with findings, a
// deadlock) and on hand-built logs: the Chrome trace JSON is well formed for every phase it
// uses, on virtual time, with every arrow ended (checked by trace_problems below, which is
// itself shown to fire on hand-broken traces); the text timeline has its header and finding,
// accounts for every step, keeps its lines short and names ids in domain terms (checked by
// text_problems, likewise shown to fire); messages and collectives have their arrows; every
// catalogue scenario's finding trace for each of its breaking variants passes both; and both
// outputs are deterministic. The checks themselves live in timeline_checks.h.
#include "sim/timeline_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/variant.h"
#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/event_phrase.h"
#include "sim/page_history.h"
#include "sim/search/random_walk.h"
#include "sim/transfer_id.h"
#include "tests/sim/timeline_checks.h"

namespace kvsim::sim::timeline_export_test {
namespace {

using nlohmann::json;

using timeline_checks::joined;
using timeline_checks::lines_of;
using timeline_checks::text_problems;
using timeline_checks::trace_problems;


// --- real runs ----------------------------------------------------------------------------

scenarios::scenario_spec from_catalogue(const std::string& name) {
  static const std::vector<scenarios::scenario_spec> catalogue =
      scenarios::load_catalogue(KVSIM_CATALOGUE);
  for (const scenarios::scenario_spec& s : catalogue) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no " << name << " in the catalogue";
  return {};
}

struct exported_run {
  std::vector<sim_event> events;
  std::vector<actor_name> actors;
  std::optional<finding> found;
  timeline_run run;
  json trace;
  std::string text;
};

exported_run run_exported(const scenarios::scenario_spec& spec, core::variant v,
                          std::uint64_t seed) {
  random_walk chooser(seed);
  const auto w = scenarios::make_scenario_world(spec, v, chooser, seed);
  properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
  checkers.attach(w->world());
  const run_outcome outcome = w->run();
  exported_run out;
  out.events = w->world().events();
  out.actors = w->world().actor_names();
  out.found = w->world().found();
  out.run = {spec.name,  v.name(), "random", "all", seed, w->world().faults().describe(),
             w->world().decisions().size(), outcome.steps, timeline_requests(spec)};
  out.trace = chrome_trace(out.events, out.actors, out.found, out.run);
  out.text = text_timeline(out.run, out.events, out.actors, out.found);
  return out;
}

std::vector<json> with_phase(const json& trace, const std::string& ph,
                             const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

json named(const json& trace, const std::string& ph, const std::string& name) {
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph && e["name"] == name) return e;
  }
  ADD_FAILURE() << "no " << ph << " named " << name;
  return json::object();
}

// Every delivered copy of a message has its arrow, and every arrow start of a delivered
// message ends; collective arrows always come in pairs.
void expect_flows_match_the_log(const exported_run& run) {
  std::set<message_id> sent;
  std::set<message_id> delivered;
  std::size_t deliveries = 0;
  for (const sim_event& e : run.events) {
    if (const auto* s = std::get_if<message_sent>(&e.body)) sent.insert(s->message);
    if (const auto* d = std::get_if<message_delivered>(&e.body); d && sent.contains(d->message)) {
      delivered.insert(d->message);
      ++deliveries;
    }
  }
  const std::vector<json> starts = with_phase(run.trace, "s", "message");
  const std::vector<json> ends = with_phase(run.trace, "f", "message");
  // A message never delivered ends its arrow once, on its "never delivered" slice.
  EXPECT_EQ(ends.size(), deliveries + (sent.size() - delivered.size()));
  std::set<std::string> end_ids;
  for (const json& f : ends) end_ids.insert(f["id"].dump());
  std::set<message_id> started;
  for (const json& s : starts) {
    const message_id message = s["args"]["message"];
    started.insert(message);
    if (delivered.contains(message)) {
      EXPECT_TRUE(end_ids.contains(s["id"].dump())) << "message " << message << " has no arrow end";
    }
  }
  EXPECT_EQ(started, sent) << "every sent message starts an arrow";

  std::set<std::string> collective_starts;
  std::set<std::string> collective_ends;
  for (const json& s : with_phase(run.trace, "s", "collective")) {
    collective_starts.insert(s["id"].dump());
  }
  for (const json& f : with_phase(run.trace, "f", "collective")) {
    collective_ends.insert(f["id"].dump());
  }
  EXPECT_EQ(collective_starts, collective_ends);
}

void expect_well_formed(const exported_run& run) {
  EXPECT_EQ(trace_problems(run.trace), std::vector<std::string>{});
  const std::string dumped = run.trace.dump();
  EXPECT_EQ(json::parse(dumped), run.trace) << "the JSON text round-trips";
  expect_flows_match_the_log(run);

  EXPECT_EQ(text_problems(run.text, run.events, run.run, run.found), std::vector<std::string>{})
      << run.text;

  if (run.found) {
    const std::vector<json> globals = with_phase(run.trace, "i", "finding");
    ASSERT_EQ(globals.size(), 1u);
    EXPECT_EQ(globals[0]["s"], "g");
    EXPECT_EQ(globals[0]["name"], "finding " + run.found->invariant);
    EXPECT_EQ(globals[0]["args"]["message"], run.found->message);
  }
}

struct export_case {
  const char* scenario;
  std::optional<core::bug> bug;
  bool expect_finding;
};

class TimelineExportScenario : public ::testing::TestWithParam<export_case> {};

TEST_P(TimelineExportScenario, TraceIsWellFormedAndTheTextLogHasALinePerStep) {
  const export_case& c = GetParam();
  const core::variant v = c.bug ? core::variant::with(*c.bug) : core::variant::safe();
  // A bug that is a race shows on some seeds only: the first of a few that shows it.
  exported_run run = run_exported(from_catalogue(c.scenario), v, 7);
  for (std::uint64_t seed = 8; c.expect_finding && !run.found && seed < 60; ++seed) {
    run = run_exported(from_catalogue(c.scenario), v, seed);
  }
  EXPECT_EQ(run.found.has_value(), c.expect_finding)
      << (run.found ? run.found->message : "no finding");
  expect_well_formed(run);
  EXPECT_FALSE(with_phase(run.trace, "B").empty());
  EXPECT_EQ(with_phase(run.trace, "B").size(), with_phase(run.trace, "E").size());
  EXPECT_FALSE(with_phase(run.trace, "b", "request").empty());
}

INSTANTIATE_TEST_SUITE_P(
    TimelineExport, TimelineExportScenario,
    ::testing::Values(export_case{"page42", std::nullopt, false},
                      export_case{"page42", core::bug::b1_destination_reuse, true},
                      export_case{"b2_early_ack", core::bug::b2_early_ack, true},
                      export_case{"hicache_local_missing", core::bug::h1_early_return, true},
                      export_case{"hicache_local_active", std::nullopt, false}),
    [](const auto& case_info) {
      const export_case& c = case_info.param;
      return std::string(c.scenario) + "_" + (c.bug ? core::to_string(*c.bug) : "safe");
    });

TEST(TimelineExport, MessagesAndCollectivesHaveArrows) {
  const exported_run b2 =
      run_exported(from_catalogue("b2_early_ack"), core::variant::with(core::bug::b2_early_ack), 7);
  EXPECT_FALSE(with_phase(b2.trace, "f", "message").empty());
  const exported_run hicache =
      run_exported(from_catalogue("hicache_local_active"), core::variant::safe(), 7);
  // Two ranks in each collective: one arrow from each member's entry to the other's exit.
  std::size_t left = 0;
  for (const sim_event& e : hicache.events) left += std::holds_alternative<collective_left>(e.body);
  ASSERT_GT(left, 0u);
  EXPECT_EQ(with_phase(hicache.trace, "f", "collective").size(), left);
}

TEST(TimelineExport, DeadlockedRunClosesEveryActorSliceAndShowsTheFinding) {
  const exported_run run = run_exported(from_catalogue("hicache_local_missing"),
                                        core::variant::with(core::bug::h1_early_return), 7);
  ASSERT_TRUE(run.found.has_value());
  EXPECT_EQ(run.found->invariant, "I5");
  expect_well_formed(run);
  // The waiting peer entered a barrier it never left: that entry says so, and its actor's
  // slice ends where the teardown unwound it.
  const json stuck = named(run.trace, "X", "enter barrier g0 #2");
  EXPECT_EQ(stuck["args"].value("unanswered", false), true) << stuck.dump();
  const json unwound = named(run.trace, "E", "r1.scheduler.0");
  EXPECT_EQ(unwound["tid"], stuck["tid"]);
  EXPECT_NE(unwound["args"]["text"].get<std::string>().find("cancelled"), std::string::npos);
}

TEST(TimelineExport, ALogCutShortStillClosesEverySliceAtItsLastTimestamp) {
  exported_run run = run_exported(from_catalogue("page42"), core::variant::safe(), 3);
  // The shortest cut keeps the first actor's start (the world's ledger_created come before).
  const auto first_start = std::find_if(run.events.begin(), run.events.end(), [](const sim_event& e) {
    return std::holds_alternative<actor_started>(e.body);
  });
  ASSERT_NE(first_start, run.events.end());
  const auto just_started = static_cast<std::size_t>(first_start - run.events.begin()) + 1;
  for (const std::size_t keep : {run.events.size() / 3, run.events.size() / 2, just_started}) {
    const std::vector<sim_event> prefix(run.events.begin(),
                                        run.events.begin() + static_cast<std::ptrdiff_t>(keep));
    const json trace = chrome_trace(prefix, run.actors);
    EXPECT_EQ(trace_problems(trace), std::vector<std::string>{}) << "first " << keep << " events";
    std::size_t closed_at_end = 0;
    double last_ts = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "M") last_ts = std::max(last_ts, e["ts"].get<double>());
      if (e["ph"] == "E" && e["args"].contains("closed_at_end_of_log")) ++closed_at_end;
    }
    EXPECT_GT(closed_at_end, 0u) << "first " << keep << " events";
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] == "E" && e["args"].contains("closed_at_end_of_log")) {
        EXPECT_EQ(e["ts"], last_ts);
      }
    }
  }
}

TEST(TimelineExport, EveryCatalogueScenarioExportsAWellFormedTraceSafeAndBroken) {
  for (const scenarios::scenario_spec& spec : scenarios::load_catalogue(KVSIM_CATALOGUE)) {
    for (const core::variant v : {core::variant::safe(), scenarios::breaking_variant(spec)}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(spec.name + " seed " + std::to_string(seed));
        expect_well_formed(run_exported(spec, v, seed));
      }
    }
  }
}

// The traces a search hands people: for every catalogue scenario and each variant it must be
// red for (expect and expect.also), the first seed's finding, as explore finds it (a random
// walk over seeds 1, 2, ...). Both exports pass their validators: the JSON parses, runs on
// virtual time and ends every arrow; the text has its header and finding, accounts for every
// step, keeps under the cap and names transfers by their executors.
TEST(TimelineExport, EveryBreakingVariantsFindingTraceExportsWell) {
  constexpr std::uint64_t max_seed = 400;
  std::size_t exported = 0;
  std::size_t undelivered = 0;  // findings with a message never delivered: arrows closed at the end
  for (const scenarios::scenario_spec& spec : scenarios::load_catalogue(KVSIM_CATALOGUE)) {
    for (const scenarios::expectation_spec& expect : scenarios::breaking_expectations(spec)) {
      SCOPED_TRACE(spec.name + " " + expect.breaking_variant);
      const core::variant v = scenarios::breaking_variant(expect);
      std::optional<exported_run> run;
      for (std::uint64_t seed = 1; seed <= max_seed && !run; ++seed) {
        exported_run attempt = run_exported(spec, v, seed);
        if (attempt.found) run = std::move(attempt);
      }
      ASSERT_TRUE(run.has_value()) << "no finding in " << max_seed << " seeds";
      const json parsed = json::parse(run->trace.dump());
      EXPECT_EQ(trace_problems(parsed), std::vector<std::string>{}) << "seed " << run->run.seed;
      EXPECT_EQ(text_problems(run->text, run->events, run->run, run->found),
                std::vector<std::string>{})
          << run->text;
      EXPECT_EQ(parsed["otherData"]["ts_unit"], "virtual time in microseconds");
      EXPECT_EQ(parsed["otherData"]["finding"], run->found->message);
      undelivered += !with_phase(parsed, "X", "message").empty() &&
                     std::any_of(parsed["traceEvents"].begin(), parsed["traceEvents"].end(),
                                 [](const json& e) {
                                   return e.contains("args") &&
                                          e["args"].value("never_completed", false);
                                 });
      ++exported;
    }
  }
  EXPECT_GT(exported, 20u);
  std::cout << exported << " finding traces exported, " << undelivered
            << " with a message never delivered\n";
}

TEST(TimelineExport, TheSameSeedGivesByteIdenticalOutputs) {
  const scenarios::scenario_spec spec = from_catalogue("page42");
  const core::variant v = core::variant::with(core::bug::b1_destination_reuse);
  const exported_run first = run_exported(spec, v, 11);
  const exported_run second = run_exported(spec, v, 11);
  EXPECT_EQ(first.text, second.text);
  EXPECT_EQ(first.trace.dump(), second.trace.dump());
  EXPECT_EQ(first.trace.dump(2), second.trace.dump(2));
}

// Three requests, two at a time: the third reuses the first's room (its generation 1).
scenarios::scenario_spec small_batch() {
  scenarios::scenario_spec spec;
  spec.name = "small_batch";
  spec.topology.concurrency = 2;
  spec.requests.resize(3);
  spec.requests[0].room = 1;
  spec.requests[1].room = 2;
  spec.requests[1].abort = scenarios::abort_phase::before_transfer;
  spec.requests[2].room = 1;
  spec.requests[2].arrive_at_us = 3;
  return spec;
}

TEST(TimelineExport, ABatchRunsTextNamesEachRequestByItsIndex) {
  const exported_run run = run_exported(small_batch(), core::variant::safe(), 1);
  expect_well_formed(run);
  const std::vector<std::string> lines = lines_of(run.text);
  const auto has = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_TRUE(has("requests: 3 by their index in the scenario; lines name each \"request N "
                  "(room R/gen G)\"; rK.request.N serves request N on rank K"))
      << run.text;
  EXPECT_TRUE(has("  request 0: room 1/gen 0, 2 pages"));
  EXPECT_TRUE(has("  request 1: room 2/gen 0, 2 pages, abort before_transfer"));
  EXPECT_TRUE(has("  request 2: room 1/gen 1, 2 pages, arrives t=3us"));
  const std::regex allocated(R"(step \d+ t=\d+us r1\.request\.2: allocates rank 1 )"
                             R"(pages \[\d+,\d+\] to request 2 \(room 1/gen 1\))");
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [&](const std::string& l) { return std::regex_match(l, allocated); }))
      << run.text;
  EXPECT_NE(run.text.find("sends metadata #"), std::string::npos);
  EXPECT_NE(run.text.find(" (request 2, room 1/gen 1) from rank 1 to rank 0"), std::string::npos);
  // Perfetto's request tracks carry the same names.
  const json request2 = named(run.trace, "b", "request 2 (room 1/gen 1)");
  EXPECT_EQ(request2["args"]["request"], 2);
  EXPECT_EQ(request2["id"], 1'000'001);
  // A prefetch scenario's rooms are no list of requests: its text keeps its words.
  EXPECT_TRUE(timeline_requests(from_catalogue("hicache_local_active")).empty());
}

// --- hand-built logs ----------------------------------------------------------------------

TEST(TimelineExport, RequestNamesNameARequestWhereALineFirstMentionsIt) {
  const request_names names({{1, 0}, {2, 0}, {1, 1}});
  EXPECT_EQ(names.name_in("allocates rank 1 pages [0,1] to room 1/gen 1"),
            "allocates rank 1 pages [0,1] to request 2 (room 1/gen 1)");
  EXPECT_EQ(names.name_in("sends ABORT #3 (room 1/gen 1) from rank 0; room 1/gen 1 ends"),
            "sends ABORT #3 (request 2, room 1/gen 1) from rank 0; request 2 ends");
  EXPECT_EQ(names.name_in("freed (was room 2/gen 0's) while r0.transfer.1 (room 2/gen 0) runs"),
            "freed (was request 1's, room 2/gen 0) while r0.transfer.1 (request 1) runs");
  EXPECT_EQ(names.name_in("with room 1/gen 0's data"), "with request 0's (room 1/gen 0) data");
  const std::string unknown = "room 1/gen 2, room 11/gen 0, room 1/gen 10, broom 1/gen 0, room 1";
  EXPECT_EQ(names.name_in(unknown), unknown);
  EXPECT_EQ(request_names().name_in("room 1/gen 0"), "room 1/gen 0");
}

const std::vector<actor_name> two_actors{{0, "prefill", 0}, {1, "decode", 0}};
const core::room_key room7{7, 0};

std::vector<sim_event> hand_log() {
  return {
      {1, 0, 0, actor_started{two_actors[0]}},
      {1, 0, 0, message_sent{3, 0, 1, core::control_kind::abort, room7}},
      {2, 0, 1, actor_started{two_actors[1]}},
      {3, 5, no_actor, message_delivered{3, 1}},
      {4, 5, 1,
       core_decided{core::event{1, core::request_finished{room7, core::request_outcome::aborted}}}},
      {4, 5, 1, actor_finished{false}},
      {5, 5, 0, actor_finished{true}},
      {5, 5, 0, fault_fired{"bad byte \xff"}},  // free text that is not UTF-8
  };
}

// Rank 0's transfer 1 writes decode's page 0 after decode freed it and gave it to the next
// request: the page-42 story, as the text tells it.
const core::room_key room7_next{7, 1};
const transfer_id late_transfer = make_transfer_id(0, 1);
const transfer_id rank1_transfer = make_transfer_id(1, 3);  // packs to 4294967299

std::vector<sim_event> page42_log() {
  using core::event;
  return {
      {1, 0, 1, core_decided{event{1, core::pages_allocated{room7, {0}}}}},
      {2, 0, 0, transfer_submitted{late_transfer, room7, 0, 1, {4}, {0}}},
      {3, 5, 1, core_decided{event{1, core::page_freed{room7, 0}}}},
      {3, 5, 1, core_decided{event{1, core::pages_allocated{room7_next, {0}}}}},
      {4, 5, 0, transfer_page_copied{late_transfer, room7, 0, 4, 1, 0}},
      {5, 5, 0, transfer_submitted{rank1_transfer, room7, 1, 0, {2}, {3}}},
      {6, 6, 1, page_read{1, 0, room7_next, 0, false, room7}},
  };
}

TEST(TimelineExport, HandBuiltLogMapsRanksActorsMessagesAndRequests) {
  const json trace = chrome_trace(hand_log(), two_actors);
  EXPECT_EQ(trace_problems(trace), std::vector<std::string>{});
  EXPECT_NO_THROW((void)trace.dump()) << "the non-UTF-8 byte was replaced";

  // pid = rank + 1, tid = actor + 1, named by rank and structural name.
  EXPECT_EQ(named(trace, "B", "r0.prefill.0")["pid"], 1);
  EXPECT_EQ(named(trace, "B", "r0.prefill.0")["tid"], 1);
  EXPECT_EQ(named(trace, "B", "r1.decode.0")["pid"], 2);
  EXPECT_EQ(named(trace, "B", "r1.decode.0")["tid"], 2);
  bool rank1_named = false;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 2) {
      rank1_named = e["args"]["name"] == "rank 1";
    }
  }
  EXPECT_TRUE(rank1_named);

  // ts is virtual time in microseconds; the three events of t=0 are spread over its
  // microsecond in log order, 333 ns apart. The step and virtual time are in args.
  const json send = named(trace, "X", "send abort to rank 1");
  EXPECT_DOUBLE_EQ(send["ts"].get<double>(), 0.333);
  EXPECT_EQ(send["args"]["step"], 1);
  EXPECT_EQ(send["args"]["time_us"], 0);
  EXPECT_EQ(send["args"]["text"], describe(hand_log()[1], two_actors));

  // The delivery is the world's, on rank 1's world thread, and the arrow ends inside it.
  const json deliver = named(trace, "X", "deliver abort from rank 0");
  EXPECT_EQ(deliver["pid"], 2);
  const json start = named(trace, "s", "message");
  const json end = named(trace, "f", "message");
  EXPECT_EQ(start["id"], end["id"]);
  EXPECT_EQ(start["tid"], send["tid"]);
  EXPECT_EQ(end["tid"], deliver["tid"]);
  EXPECT_EQ(end["bp"], "e");
  EXPECT_GT(end["ts"].get<double>(), deliver["ts"].get<double>());
  EXPECT_LT(end["ts"].get<double>(), deliver["ts"].get<double>() + deliver["dur"].get<double>());

  // The request's async slice: from the send (first to name it) to request_finished.
  const json request_begin = named(trace, "b", "room 7/gen 0");
  const json request_end = named(trace, "e", "room 7/gen 0");
  EXPECT_EQ(request_begin["id"], 7'000'000);
  EXPECT_EQ(request_begin["cat"], "request");
  EXPECT_DOUBLE_EQ(request_begin["ts"].get<double>(), 0.333);
  EXPECT_EQ(request_end["args"]["last_event"], 4);

  // The core decision is an instant named by its kind.
  EXPECT_EQ(named(trace, "i", "request_finished")["s"], "t");
}

TEST(TimelineExport, AMessageNeverDeliveredEndsItsArrowAfterTheLastEvent) {
  std::vector<sim_event> log = hand_log();
  log.erase(log.begin() + 3);  // message 3 is never delivered
  const json trace = chrome_trace(log, two_actors);
  EXPECT_EQ(trace_problems(trace), std::vector<std::string>{});
  const json start = named(trace, "s", "message");
  const json end = named(trace, "f", "message");
  EXPECT_EQ(start["id"], end["id"]);
  const json never = named(trace, "X", "never delivered: abort from rank 0");
  EXPECT_EQ(never["args"]["never_completed"], true);
  EXPECT_EQ(never["pid"], 2) << "on the destination's rank";
  EXPECT_EQ(end["tid"], never["tid"]);
  double last_of_log = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e.contains("args") && e["args"].contains("time_us")) {
      last_of_log = std::max(last_of_log, e["ts"].get<double>());
    }
  }
  EXPECT_GT(never["ts"].get<double>(), last_of_log);
  EXPECT_LT(never["ts"].get<double>(), 6.0) << "still within the last virtual microsecond";
  EXPECT_EQ(named(trace, "X", "send abort to rank 1")["args"].value("unanswered", false), true);
}

TEST(TimelineExport, TheFindingsPagesGetATrackOfTheirOwners) {
  const finding found{"I1", "I1: a late write", {2, 4}, {}};
  const json trace = chrome_trace(page42_log(), two_actors, found);
  EXPECT_EQ(trace_problems(trace), std::vector<std::string>{});
  std::map<std::string, std::uint64_t> tracks;  // thread name: tid
  std::uint64_t pages_pid = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "pages of the finding") {
      pages_pid = e["pid"];
    }
  }
  ASSERT_NE(pages_pid, 0u);
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pages_pid) {
      tracks[e["args"]["name"]] = e["tid"];
    }
  }
  ASSERT_EQ(tracks.size(), 2u);
  ASSERT_TRUE(tracks.contains("rank 1 page 0"));
  ASSERT_TRUE(tracks.contains("rank 0 page 4"));
  // rank 1 page 0: room 7/gen 0 from its allocation to its free, then room 7/gen 1 to the end.
  std::vector<std::string> owners;
  std::vector<std::string> moments;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" || e["pid"] != pages_pid || e["tid"] != tracks["rank 1 page 0"]) continue;
    if (e["ph"] == "B" || e["ph"] == "E") owners.push_back(e["ph"].get<std::string>() + " " + e["name"].get<std::string>());
    if (e["ph"] == "i") moments.push_back(e["name"]);
  }
  EXPECT_EQ(owners, (std::vector<std::string>{"B room 7/gen 0", "E room 7/gen 0", "B room 7/gen 1",
                                              "E room 7/gen 1"}));
  EXPECT_EQ(moments.size(), 6u);
  EXPECT_NE(std::find(moments.begin(), moments.end(),
                      "freed (was room 7/gen 0's) while r0.transfer.1 (room 7/gen 0) in flight"),
            moments.end());
  EXPECT_EQ(named(trace, "i", "finding I1")["args"]["pages"],
            json::array({"rank 0 page 4", "rank 1 page 0"}));
}

TEST(TimelineExport, AFindingIsAGlobalInstantAndMarksItsEvidence) {
  const finding found{"I9", "room 7/gen 0 never finished", {1}, {"a detail"}};
  const json trace = chrome_trace(hand_log(), two_actors, found);
  EXPECT_EQ(trace_problems(trace), std::vector<std::string>{});
  const json global = named(trace, "i", "finding I9");
  EXPECT_EQ(global["s"], "g");
  EXPECT_EQ(global["args"]["evidence"], json::array({1}));
  EXPECT_EQ(named(trace, "X", "send abort to rank 1")["args"]["evidence_of"], "I9");
}

const timeline_run hand_run{"hand", "B1", "random", "all", 4, "abort=50%", 5, 5, {}};

TEST(TimelineExport, TextTimelineHasAHeaderAnEventPerLineAndTheEnd) {
  EXPECT_EQ(text_timeline(hand_run, hand_log(), two_actors, std::nullopt), 
            "kvsim timeline: scenario hand, variant B1, strategy random, seed 4, checkers all\n"
            "faults: abort=50%\n"
            "run: 5 decisions, steps 0..5, 8 events, virtual time 0..5us\n"
            "time: t= is virtual time in microseconds (us); step = schedule decisions taken "
            "before the event (0: the world's setup)\n"
            "finding: none\n"
            "lines: step S t=Tus ACTOR: what happened; [evidence] marks the events that prove "
            "the finding; the finding and its pages' histories follow the run\n"
            "\n"
            "step 0: a scheduling decision only, no events\n"
            "step 1 t=0us r0.prefill.0: starts\n"
            "step 1 t=0us r0.prefill.0: sends ABORT #3 (room 7/gen 0) from rank 0 to rank 1\n"
            "step 2 t=0us r1.decode.0: starts\n"
            "step 3 t=5us world: delivers ABORT #3 (room 7/gen 0) to rank 1\n"
            "step 4 t=5us r1.decode.0: rank 1 request_finished room 7/gen 0 outcome=aborted\n"
            "step 4 t=5us r1.decode.0: returns\n"
            "step 5 t=5us r0.prefill.0: unwound at the end of the run\n"
            "step 5 t=5us r0.prefill.0: fault_fired bad byte \xff\n"
            "\n"
            "no finding\n");
  EXPECT_EQ(text_problems(text_timeline(hand_run, hand_log(), two_actors, std::nullopt), hand_log(),
                          hand_run, std::nullopt),
            std::vector<std::string>{});
}

TEST(TimelineExport, TheTeardownStepNamesEachActorOnItsLine) {
  const std::vector<sim_event> teardown{{9, 20, 0, actor_finished{true}},
                                        {9, 20, 1, actor_finished{true}}};
  const std::string text = text_timeline(hand_run, teardown, two_actors, std::nullopt);
  EXPECT_NE(text.find("step 9 t=20us r0.prefill.0: unwound at the end of the run\n"
                      "step 9 t=20us r1.decode.0: unwound at the end of the run\n"),
            std::string::npos)
      << text;
}

TEST(TimelineExport, QuietStepsAreSummarisedNotDropped) {
  const std::vector<sim_event> log{{2, 0, 0, actor_started{two_actors[0]}},
                                   {3, 0, 1, actor_started{two_actors[1]}},
                                   {7, 5, 0, actor_finished{false}}};
  const timeline_run run{"hand", "safe", "random", "all", 1, "", 9, 9, {}};
  const std::string text = text_timeline(run, log, two_actors, std::nullopt);
  EXPECT_NE(text.find("steps 0..1: scheduling decisions only, no events (2 steps)\n"
                      "step 2 t=0us r0.prefill.0: starts\n"
                      "step 3 t=0us r1.decode.0: starts\n"
                      "steps 4..6: scheduling decisions only, no events (3 steps)\n"
                      "step 7 t=5us r0.prefill.0: returns\n"
                      "steps 8..9: scheduling decisions only, no events (2 steps)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text_problems(text, log, run, std::nullopt), std::vector<std::string>{});
}

TEST(TimelineExport, TheTextTellsTheFindingsPagesInDomainTerms) {
  const finding found{"I1", "I1: a late write", {2, 4}, {"the late write landed"}};
  const timeline_run run{"hand", "B1", "random", "all", 4, "abort=50%", 6, 6, {}};
  const std::string text = text_timeline(run, page42_log(), two_actors, found);
  EXPECT_EQ(text_problems(text, page42_log(), run, found), std::vector<std::string>{}) << text;
  EXPECT_NE(text.find("finding: I1: a late write\n"), std::string::npos) << text;
  EXPECT_NE(text.find("r1.transfer.3 (room 7/gen 0): rank 1 page 2 -> rank 0 page 3"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("4294967299"), std::string::npos) << text;
  EXPECT_NE(text.find("step 4 t=5us r0.prefill.0: r0.transfer.1 (room 7/gen 0) copies rank 0 page 4 "
                      "-> rank 1 page 0  [evidence]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1 page 0:\n"
                      "  step 1 t=0us r1.decode.0: allocated to room 7/gen 0\n"
                      "  step 2 t=0us r0.prefill.0: destination of r0.transfer.1 (room 7/gen 0), "
                      "from rank 0 page 4\n"
                      "  step 3 t=5us r1.decode.0: freed (was room 7/gen 0's) while r0.transfer.1 "
                      "(room 7/gen 0) in flight\n"
                      "  step 3 t=5us r1.decode.0: allocated to room 7/gen 1\n"
                      "  step 4 t=5us r0.prefill.0: written by r0.transfer.1 (room 7/gen 0) from "
                      "rank 0 page 4 while room 7/gen 1 owns it\n"
                      "  step 6 t=6us r1.decode.0: read by room 7/gen 1 (its page 0): CORRUPT, "
                      "holds room 7/gen 0's data\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 0 page 4:\n"), std::string::npos) << text;
}

TEST(TimelineExport, LongLinesWrapUnderTheCap) {
  const std::vector<sim_event> log{{1, 0, 0, fault_fired{std::string(400, 'x') + " " +
                                                        std::string(50, 'y') + " z"}}};
  const timeline_run run{"hand", "safe", "random", "all", 1, "", 1, 1, {}};
  const std::string text = text_timeline(run, log, two_actors, std::nullopt);
  EXPECT_EQ(text_problems(text, log, run, std::nullopt), std::vector<std::string>{}) << text;
  // Nothing is lost to the wrapping.
  const std::size_t from = text.find("step 1 t=0us");
  ASSERT_NE(from, std::string::npos) << text;
  const std::string event = text.substr(from, text.find("\n\nno finding") - from);
  EXPECT_EQ(std::count(event.begin(), event.end(), 'x'), 400) << event;
  EXPECT_EQ(std::count(event.begin(), event.end(), 'y'), 50) << event;
  EXPECT_TRUE(event.ends_with(" z")) << event;
}

TEST(TimelineExport, AnEmptyLogIsAnEmptyButValidTrace) {
  const json trace = chrome_trace({}, two_actors);
  EXPECT_EQ(trace_problems(trace), std::vector<std::string>{});
  EXPECT_TRUE(trace["traceEvents"].empty());
}

// --- the validator fires (red before green) -----------------------------------------------

json without_first(json trace, const std::string& ph, const std::string& cat = "") {
  json& events = trace["traceEvents"];
  for (auto it = events.begin(); it != events.end(); ++it) {
    if ((*it)["ph"] == ph && (cat.empty() || it->value("cat", "") == cat)) {
      events.erase(it);
      return trace;
    }
  }
  ADD_FAILURE() << "nothing with phase " << ph << " to remove";
  return trace;
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(TimelineExportValidator, CatchesHandBrokenTraces) {
  const exported_run run = run_exported(from_catalogue("b2_early_ack"),
                                        core::variant::with(core::bug::b2_early_ack), 7);
  ASSERT_EQ(trace_problems(run.trace), std::vector<std::string>{}) << "green before the breaks";

  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "E")), "B never ended"))
      << joined(trace_problems(without_first(run.trace, "E")));
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "B")), "E without a B"));
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "e", "request")), "never ended"));
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "b", "request")),
                       "async e without its b"));
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "s", "message")),
                       "flow end without an earlier start"));
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "M")), "has no process_name"));

  json broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] == "X") {
      e["dur"] = 1'000'000'000;  // runs past the end of its actor's life
      break;
    }
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "without nesting"));

  broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] == "f") {
      e.erase("id");
      break;
    }
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "without id and cat"));

  broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] == "E") {
      e["ts"] = 0;  // earlier than its own B and everything before it on the thread
      break;
    }
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "ts goes back"));

  broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] == "f") {
      e["ts"] = e["ts"].get<double>() + 5;  // past the end of its delivery slice
      break;
    }
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "outside every slice"));

  broken = run.trace;
  broken["traceEvents"][0].erase("pid");
  EXPECT_TRUE(mentions(trace_problems(broken), "no unsigned pid"));

  // The old export's faults: an arrow that never ends, a clock of steps rather than time.
  EXPECT_TRUE(mentions(trace_problems(without_first(run.trace, "f", "message")), "never ended"));
  broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] == "i") {
      e["ts"] = e["ts"].get<double>() + 1;  // a microsecond late
      break;
    }
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "not the event's virtual time"));
  broken = run.trace;
  for (json& e : broken["traceEvents"]) {
    if (e["ph"] != "M") e["ts"] = e["args"].value("step", 0) * 1000;  // the old step clock
  }
  EXPECT_TRUE(mentions(trace_problems(broken), "not the event's virtual time"));
  broken = run.trace;
  json& all = broken["traceEvents"];
  std::size_t first = 0;
  while (all[first]["ph"] == "M") ++first;
  std::swap(all[first], all[all.size() - 1]);  // the run's end first
  EXPECT_TRUE(mentions(trace_problems(broken), "ts goes back in the trace"));
}

std::string without_line(const std::string& text, const std::string& start) {
  std::string out;
  for (const std::string& line : lines_of(text)) {
    if (!line.starts_with(start)) out += line + "\n";
  }
  return out;
}

TEST(TimelineExportValidator, CatchesBrokenTextTimelines) {
  const exported_run run = run_exported(from_catalogue("page42"),
                                        core::variant::with(core::bug::b1_destination_reuse), 3);
  ASSERT_TRUE(run.found.has_value());
  const auto problems = [&](const std::string& text) {
    return text_problems(text, run.events, run.run, run.found);
  };
  ASSERT_EQ(problems(run.text), std::vector<std::string>{}) << "green before the breaks";

  EXPECT_TRUE(mentions(problems(without_line(run.text, "kvsim timeline:")), "no title"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "finding: ")), "no finding line"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "finding " + run.found->invariant)),
                       "no finding section"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "  " + run.found->message.substr(0, 20))),
                       "message is missing"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "step 1 t=")), "unaccounted"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "step 2 t=")), "event lines for"));
  EXPECT_TRUE(mentions(problems(run.text + std::string(161, '-') + "\n"), "line over 160"));
  // The old text log: no header, steps without events dropped, every event of a step on one
  // line of 300+ characters.
  const std::string old_log = "step 13 t=5us r1.decode.0: " + std::string(300, '.') + "\n";
  EXPECT_TRUE(mentions(problems(old_log), "no title"));
  EXPECT_TRUE(mentions(problems(old_log), "unaccounted"));
  EXPECT_TRUE(mentions(problems(old_log), "line over 160"));

  // A request unlisted, or mentioned by its key alone; a legend where no request is known.
  EXPECT_TRUE(mentions(problems(without_line(run.text, "requests: ")), "no requests legend"));
  EXPECT_TRUE(mentions(problems(without_line(run.text, "  request 0: ")), "legend lines for"));
  const std::string key = core::to_string(run.run.requests.at(0).key);
  const std::string named_form = "to request 0 (" + key + ")";
  std::string unnamed = run.text;
  const std::size_t named_at = unnamed.find(named_form);
  ASSERT_NE(named_at, std::string::npos) << run.text;
  unnamed.replace(named_at, named_form.size(), "to " + key);
  EXPECT_TRUE(mentions(problems(unnamed), key + " not named request 0")) << unnamed;

  // A transfer printed by its packed id.
  std::vector<sim_event> log = page42_log();
  const timeline_run hand{"hand", "B1", "random", "all", 4, "abort=50%", 6, 6, {}};
  const std::string text = text_timeline(hand, log, two_actors, std::nullopt);
  ASSERT_EQ(text_problems(text, log, hand, std::nullopt), std::vector<std::string>{});
  EXPECT_TRUE(mentions(text_problems(text + "transfer=4294967299\n", log, hand, std::nullopt),
                       "a packed transfer id"));
  EXPECT_TRUE(mentions(text_problems(text + "requests: 1\n", log, hand, std::nullopt),
                       "no requests known"));
}

}  // namespace
}  // namespace kvsim::sim::timeline_export_test
