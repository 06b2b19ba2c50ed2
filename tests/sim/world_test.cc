// The simulator on its test world (two ranks, a collective, a transfer, an abort): runs end,
// the same seed gives the same run byte for byte, replay reproduces, and planted bugs are
// found with the evidence a user needs.
#include "sim/world.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "properties/liveness_checker.h"
#include "sim/search/first_choice.h"
#include "sim/wait_queue.h"
#include "sim/search/replay.h"
#include "tests/sim/two_rank_runs.h"

namespace kvsim::sim::world_test {
namespace {

using testing::planted_use_after_free;
using testing::run_random;
using testing::run_record;
using testing::run_two_rank;

// Runs that end before any actor ran: Boost.Context cannot switch main to itself, so the
// world must not suspend main when its first decision already ends the run.
TEST(World, AWorldWithNoActorsIsQuiescentAtOnce) {
  first_choice chooser;
  world w(chooser, world_config{});
  const run_outcome outcome = w.run();
  EXPECT_EQ(outcome.end, run_end::quiescent);
  EXPECT_EQ(outcome.steps, 0u);
}

TEST(World, AStrictReplayThatMissesItsFirstDecisionDivergesCleanly) {
  // Two runnable actors; the recording names a subject that is not among them.
  replay chooser({decision{decision_kind::schedule, 2, 0, 99}}, replay_mode::strict);
  world w(chooser, world_config{});
  int ran = 0;
  w.spawn({0, "a", 0}, [&] { ++ran; });
  w.spawn({0, "b", 0}, [&] { ++ran; });
  const run_outcome outcome = w.run();
  EXPECT_EQ(outcome.end, run_end::diverged);
  EXPECT_EQ(ran, 0) << "no actor runs past a divergence";
  ASSERT_TRUE(w.diverged().has_value());
  EXPECT_EQ(w.diverged()->decision_index, 0u);
}

// The audit at quiescence runs once, after every actor returned and before the checkers'
// quiescence checks, and its events are checked like any other: one that breaks an invariant
// ends the run with that finding.
TEST(World, QuiescenceAuditsRunOnceAfterTheLastActorAndTheirEventsAreChecked) {
  struct audit_watcher : checker {
    const char* name() const override { return "audit_watcher"; }
    std::optional<finding> observe(const sim_event& e, std::size_t index) override {
      const auto* fired = std::get_if<fault_fired>(&e.body);
      if (fired == nullptr || fired->what != "audit") return std::nullopt;
      audit_index = index;
      audit_actor = e.actor;
      if (!fire) return std::nullopt;
      return finding{"I8", "the audit says so", {index}, {}};
    }
    std::optional<finding> at_quiescence() override {
      quiescence_saw_audit = audit_index.has_value();
      return std::nullopt;
    }
    bool fire = false;
    std::optional<std::size_t> audit_index;
    actor_id audit_actor = 0;
    bool quiescence_saw_audit = false;
  };
  for (const bool fire : {false, true}) {
    first_choice chooser;
    world w(chooser, world_config{});
    int audits = 0;
    bool actor_done = false;
    w.spawn({0, "a", 0}, [&] {
      w.step();
      actor_done = true;
    });
    w.add_quiescence_audit([&] {
      ++audits;
      EXPECT_TRUE(actor_done) << "the audit runs after the last actor returned";
      w.emit(fault_fired{"audit"});
    });
    audit_watcher watcher;
    watcher.fire = fire;
    w.add_checker(watcher);
    const run_outcome outcome = w.run();
    EXPECT_EQ(audits, 1);
    ASSERT_TRUE(watcher.audit_index.has_value());
    EXPECT_EQ(watcher.audit_actor, no_actor) << "audit events belong to the world";
    if (fire) {
      EXPECT_EQ(outcome.end, run_end::finding);
      ASSERT_TRUE(w.found().has_value());
      EXPECT_EQ(w.found()->message, "the audit says so");
    } else {
      EXPECT_EQ(outcome.end, run_end::quiescent);
      EXPECT_TRUE(watcher.quiescence_saw_audit);
    }
  }
}

// An actor that ends itself mid-call (a rank whose process died) stops there, finishes as if
// it had returned, and the others run on to quiescence.
TEST(World, AnActorThatEndsItselfStopsWhereItStands) {
  first_choice chooser;
  world w(chooser, world_config{});
  bool after_end = false;
  int other_steps = 0;
  w.spawn({0, "dies", 0}, [&] {
    std::vector<int> frame_with_a_destructor(64, 1);
    w.step();
    w.end_current_actor();
    after_end = true;
  });
  w.spawn({1, "lives", 0}, [&] {
    for (int i = 0; i < 3; ++i, ++other_steps) w.step();
  });
  const run_outcome outcome = w.run();
  EXPECT_EQ(outcome.end, run_end::quiescent);
  EXPECT_FALSE(after_end);
  EXPECT_EQ(other_steps, 3);
  int finished_returned = 0;
  for (const sim_event& e : w.events()) {
    if (const auto* f = std::get_if<actor_finished>(&e.body)) finished_returned += f->cancelled ? 0 : 1;
  }
  EXPECT_EQ(finished_returned, 2);
}

TEST(World, SafeTestWorldRunsToQuiescenceWithoutFindings) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const run_record run = run_random(seed);
    ASSERT_EQ(run.outcome.end, run_end::quiescent)
        << "seed " << seed << ": " << (run.found ? run.found->message : "");
    EXPECT_GT(run.outcome.steps, 10u);
  }
}

TEST(World, TheSameSeedGivesTheSameDecisionsAndEvents) {
  for (std::uint64_t seed : {3u, 17u, 99u}) {
    const run_record first = run_random(seed, planted_use_after_free());
    const run_record second = run_random(seed, planted_use_after_free());
    EXPECT_EQ(first.decisions, second.decisions) << "seed " << seed;
    EXPECT_EQ(first.event_lines, second.event_lines) << "seed " << seed;
    EXPECT_EQ(decision_hash(first.decisions), decision_hash(second.decisions));
  }
}

TEST(World, PctIsDeterministicToo) {
  pct a(5, 3, 40);
  pct b(5, 3, 40);
  EXPECT_EQ(run_two_rank(a, 5, {}).decisions, run_two_rank(b, 5, {}).decisions);
}

TEST(World, DifferentSeedsExploreDifferentInterleavings) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    hashes.insert(decision_hash(run_random(seed).decisions));
  }
  EXPECT_GT(hashes.size(), 25u);
}

// Finds the first seed in [from, from + runs) whose random run has a finding.
std::optional<std::uint64_t> first_finding(std::uint64_t from, std::uint64_t runs,
                                           const scenarios::two_rank_options& options) {
  for (std::uint64_t seed = from; seed < from + runs; ++seed) {
    if (run_random(seed, options).found) return seed;
  }
  return std::nullopt;
}

// The planted use-after-free (decode frees A's destination pages on abort, LIFO hands them
// to B while A's transfer still writes) is found by random search within 1,000 runs from
// every one of 20 starting seeds, and the finding names the page, both requests and steps.
TEST(World, RandomSearchFindsThePlantedUseAfterFreeWithin1000Runs) {
  constexpr std::uint64_t base_seeds = 20;
  std::uint64_t total_runs = 0;
  for (std::uint64_t base = 0; base < base_seeds; ++base) {
    const std::uint64_t from = 1'000'000 * (base + 1);
    const auto seed = first_finding(from, 1000, planted_use_after_free());
    ASSERT_TRUE(seed.has_value()) << "no finding in 1000 runs from seed " << from;
    total_runs += *seed - from + 1;
    const run_record run = run_random(*seed, planted_use_after_free());
    ASSERT_EQ(run.found->invariant, "I1") << run.found->message;
    EXPECT_NE(run.found->message.find("room 7/gen 0"), std::string::npos) << run.found->message;
    EXPECT_NE(run.found->message.find("page"), std::string::npos) << run.found->message;
    EXPECT_NE(run.found->message.find("step"), std::string::npos) << run.found->message;
  }
  std::cout << "planted use-after-free: found from all " << base_seeds << " base seeds, "
            << static_cast<double>(total_runs) / base_seeds << " runs on average\n";
}

TEST(World, TheUseAfterFreeFindingNamesBothRequests) {
  const auto seed = first_finding(1, 5000, planted_use_after_free());
  ASSERT_TRUE(seed.has_value());
  // Keep searching until the late write lands in B's pages (not only in a free page).
  std::optional<run_record> both;
  for (std::uint64_t s = *seed; s < *seed + 20000 && !both; ++s) {
    run_record run = run_random(s, planted_use_after_free());
    if (run.found && run.found->message.find("room 7/gen 1") != std::string::npos) both = run;
  }
  ASSERT_TRUE(both.has_value());
  EXPECT_NE(both->found->message.find("room 7/gen 0"), std::string::npos) << both->found->message;
  EXPECT_FALSE(both->found->evidence.empty());
}

TEST(World, StrictReplayReproducesEventsAndFinding) {
  const auto seed = first_finding(1, 5000, planted_use_after_free());
  ASSERT_TRUE(seed.has_value());
  const run_record original = run_random(*seed, planted_use_after_free());
  replay again(original.decisions, replay_mode::strict);
  const run_record replayed = run_two_rank(again, *seed, planted_use_after_free());
  EXPECT_FALSE(replayed.diverged.has_value());
  EXPECT_EQ(replayed.decisions, original.decisions);
  EXPECT_EQ(replayed.event_lines, original.event_lines);
  ASSERT_TRUE(replayed.found.has_value());
  EXPECT_EQ(*replayed.found, *original.found);
}

TEST(World, StrictReplayOfDecisionsThatNoLongerFitReportsTheDivergence) {
  const run_record original = run_random(11);
  std::vector<decision> edited = original.decisions;
  // Claim that at decision 5 an actor ran that is not among the options offered there.
  for (decision& d : edited) {
    if (d.kind == decision_kind::schedule && &d >= &edited[5]) {
      d.subject = 999;
      break;
    }
  }
  replay again(edited, replay_mode::strict);
  const run_record replayed = run_two_rank(again, 11, {});
  EXPECT_EQ(replayed.outcome.end, run_end::diverged);
  ASSERT_TRUE(replayed.diverged.has_value());
  EXPECT_GE(replayed.diverged->decision_index, 5u);
  EXPECT_NE(replayed.diverged->expected.find("subject 999"), std::string::npos);
  EXPECT_NE(replayed.diverged->actual.find("schedule among"), std::string::npos);
}

TEST(World, StrictReplayOfATruncatedListDiverges) {
  const run_record original = run_random(12);
  std::vector<decision> prefix(original.decisions.begin(), original.decisions.begin() + 10);
  replay again(prefix, replay_mode::strict);
  const run_record replayed = run_two_rank(again, 12, {});
  ASSERT_TRUE(replayed.diverged.has_value());
  EXPECT_EQ(replayed.diverged->decision_index, 10u);
  EXPECT_NE(replayed.diverged->expected.find("no more decisions"), std::string::npos);
}

TEST(World, StrictReplayOfAListWithLeftoverDecisionsDiverges) {
  const run_record original = run_random(13);
  std::vector<decision> longer = original.decisions;
  longer.push_back(longer.back());
  replay again(longer, replay_mode::strict);
  const run_record replayed = run_two_rank(again, 13, {});
  ASSERT_TRUE(replayed.diverged.has_value());
  EXPECT_NE(replayed.diverged->actual.find("the run ended"), std::string::npos);
}

TEST(World, LenientReplayFinishesTheRunAfterThePrefix) {
  const run_record original = run_random(14);
  std::vector<decision> prefix(original.decisions.begin(), original.decisions.begin() + 10);
  replay again(prefix, replay_mode::lenient, std::make_unique<random_walk>(777));
  const run_record replayed = run_two_rank(again, 14, {});
  EXPECT_FALSE(replayed.diverged.has_value());
  EXPECT_EQ(replayed.outcome.end, run_end::quiescent);
  EXPECT_EQ(again.replayed(), 10u);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), replayed.decisions.begin()));
}

TEST(World, APlantedCollectiveMismatchIsADeadlockWithAWaitForGraph) {
  scenarios::two_rank_options options;
  options.skip_final_barrier = true;
  const run_record run = run_random(21, options);
  ASSERT_TRUE(run.found.has_value());
  EXPECT_EQ(run.found->invariant, "I5");
  EXPECT_NE(run.found->message.find("r0.prefill.0 waits on collective g0 seq 2 barrier"),
            std::string::npos)
      << run.found->message;
  const auto& details = run.found->details;
  EXPECT_NE(std::find(details.begin(), details.end(), "r1.decode.0 has returned"), details.end());
  EXPECT_NE(std::find(details.begin(), details.end(),
                      "group g0 collective #2 (barrier): entered by [r0], never entered by [r1]"),
            details.end());
}

TEST(World, APlantedLeakIsFoundAtQuiescence) {
  scenarios::two_rank_options options;
  options.leak_request_b = true;
  const run_record run = run_random(22, options);
  ASSERT_TRUE(run.found.has_value());
  EXPECT_EQ(run.found->invariant, "I8");
  EXPECT_NE(run.found->message.find("room 7/gen 1"), std::string::npos) << run.found->message;
}

bool has_line(const finding& f, const std::string& line) {
  return std::find(f.details.begin(), f.details.end(), line) != f.details.end();
}

// A line that starts with `prefix` and contains `part` (step numbers depend on the schedule).
bool has_line_with(const finding& f, const std::string& prefix, const std::string& part = "") {
  return std::any_of(f.details.begin(), f.details.end(), [&](const std::string& line) {
    return line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos;
  });
}

// A stuck world for the evidence tests: rank 1 starts request 7/0 (the liveness checker sees
// it) and waits on its mailbox for a message nobody sends; a "helper" returns.
void stuck_request_world(world& w, wait_queue& mailbox) {
  w.spawn({1, "decode", 0}, [&w, &mailbox] {
    w.core_sink().emit(core::event{1, core::pages_allocated{{7, 0}, {3}}});
    w.step();
    mailbox.wait();
  });
  w.spawn({0, "helper", 0}, [&w] { w.step(); });
}

TEST(World, TheStepLimitCatchesALivelockWithEvidence) {
  random_walk chooser(1);
  world w(chooser, world_config{100, 64 * 1024, {}});
  wait_queue mailbox(w, "mailbox of rank 1");
  properties::liveness_checker liveness(0, 1'000'000);
  w.add_checker(liveness);
  stuck_request_world(w, mailbox);
  w.spawn({0, "spinner", 0}, [&w] {
    for (;;) {
      w.emit(fault_fired{"spin"});
      w.step();
    }
  });
  const run_outcome outcome = w.run();
  EXPECT_EQ(outcome.end, run_end::finding);
  EXPECT_EQ(outcome.steps, 100u);
  ASSERT_TRUE(w.found().has_value());
  const finding& f = *w.found();
  EXPECT_EQ(f.invariant, "livelock") << "no deadline passed: the clock never moved";
  EXPECT_EQ(f.message,
            "livelock: no quiescence within the step limit of 100 steps (t=0us); r1.decode.0 "
            "waits on mailbox of rank 1; r0.spinner.0 is ready to run");
  // Who waits on what, who is done, what was last decided, what is left unfinished.
  EXPECT_TRUE(has_line(f, "r1.decode.0 waits on mailbox of rank 1")) << ::testing::PrintToString(f.details);
  EXPECT_TRUE(has_line(f, "r0.spinner.0 is ready to run"));
  EXPECT_TRUE(has_line(f, "1 actors have returned"));
  EXPECT_TRUE(has_line_with(f, "last core decision: step ",
                            "r1.decode.0 core_decided rank 1 pages_allocated room 7/gen 0"))
      << ::testing::PrintToString(f.details);
  EXPECT_TRUE(has_line_with(f, "unfinished: room 7/gen 0 on rank 1 started at t=0us (step ",
                            "pages_allocated), due by t=1000000us"))
      << ::testing::PrintToString(f.details);
  // The last 8 events, the spinner's own last of them.
  EXPECT_EQ(std::count_if(f.details.begin(), f.details.end(),
                          [](const std::string& l) { return l.rfind("recent: ", 0) == 0; }),
            8);
  EXPECT_TRUE(has_line_with(f, "recent: step 99 t=0us r0.spinner.0 fault_fired spin"))
      << ::testing::PrintToString(f.details);
}

// A run that spins with the clock moving (a poller sleeping between polls) past a request's
// due time is an I9 finding at the step limit, not a bare livelock: the request is overdue
// whether or not an event came to notice it. The livelock evidence follows in its details.
TEST(World, AStepLimitPastARequestsDueTimeIsI9WithTheLivelockEvidence) {
  random_walk chooser(1);
  world w(chooser, world_config{200, 64 * 1024, {}});
  wait_queue mailbox(w, "mailbox of rank 1");
  properties::liveness_checker liveness(50, 100);  // faults stopped at 50us: due by 150us
  w.add_checker(liveness);
  stuck_request_world(w, mailbox);
  w.spawn({0, "poller", 0}, [&w] {
    for (;;) w.wait_virtual(10);
  });
  EXPECT_EQ(w.run().end, run_end::finding);
  ASSERT_TRUE(w.found().has_value());
  const finding& f = *w.found();
  EXPECT_EQ(f.invariant, "I9") << f.message;
  EXPECT_EQ(f.message,
            "I9: room 7/gen 0 on rank 1 started at t=0us has not finished by t=150us, 100us "
            "after faults stopped at t=50us");
  EXPECT_TRUE(has_line_with(f, "livelock: no quiescence within the step limit of 200 steps"))
      << ::testing::PrintToString(f.details);
  EXPECT_TRUE(has_line(f, "r1.decode.0 waits on mailbox of rank 1"));
}

TEST(World, ADeadlockNamesWhatWasLastDecidedAndWhatIsUnfinished) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  wait_queue mailbox(w, "mailbox of rank 1");
  properties::liveness_checker liveness(0, 1'000'000);
  w.add_checker(liveness);
  stuck_request_world(w, mailbox);
  EXPECT_EQ(w.run().end, run_end::finding);
  ASSERT_TRUE(w.found().has_value());
  const finding& f = *w.found();
  EXPECT_EQ(f.invariant, "deadlock");
  EXPECT_NE(f.message.find("nothing can run; r1.decode.0 waits on mailbox of rank 1"),
            std::string::npos)
      << f.message;
  EXPECT_TRUE(has_line(f, "r0.helper.0 has returned")) << ::testing::PrintToString(f.details);
  EXPECT_TRUE(has_line_with(f, "last core decision: step ", "pages_allocated room 7/gen 0"));
  EXPECT_TRUE(has_line_with(f, "recent: step ", "r0.helper.0 actor_finished returned"));
  EXPECT_TRUE(has_line_with(f, "unfinished: room 7/gen 0 on rank 1 started at t=0us (step ",
                            "pages_allocated), due by t=1000000us"))
      << ::testing::PrintToString(f.details);
}

// --- faults stop -------------------------------------------------------------------------

// Every fault kind certain until 100us: each opportunity fires before the stop; after it none
// does and none is even a decision (the search has nothing to choose), while the scenario's
// abort keeps firing.
TEST(World, FaultsFireUntilTheirStopAndNeverAfterExceptTheAbort) {
  fault_profile faults;
  for (std::size_t i = 0; i < fault_kind_count; ++i) faults.per_million[i] = 1'000'000;
  faults.faults_stop_us = 100;
  random_walk chooser(1);
  world w(chooser, world_config{20'000, 64 * 1024, faults});
  std::vector<std::pair<std::uint64_t, bool>> drops;
  std::vector<bool> aborts;
  w.spawn({0, "faulty", 0}, [&] {
    for (int i = 0; i < 4; ++i) {
      drops.emplace_back(w.now_us(), w.fault(fault_kind::message_drop));
      aborts.push_back(w.fault(fault_kind::abort));
      w.wait_virtual(40);
    }
  });
  EXPECT_EQ(w.run().end, run_end::quiescent);
  EXPECT_EQ(drops, (std::vector<std::pair<std::uint64_t, bool>>{
                       {0, true}, {40, true}, {80, true}, {120, false}}));
  EXPECT_EQ(aborts, (std::vector<bool>{true, true, true, true}));
  std::size_t fault_decisions = 0;
  for (const decision& d : w.decisions()) fault_decisions += d.kind == decision_kind::fault;
  EXPECT_EQ(fault_decisions, 3u + 4u) << "drops before the stop, aborts always";
}

TEST(World, AnActorThatThrowsIsAFindingNotACrash) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  w.spawn({0, "thrower", 0}, [&w] {
    w.step();
    throw std::runtime_error("boom");
  });
  w.spawn({1, "bystander", 0}, [&w] {
    for (int i = 0; i < 50; ++i) w.step();
  });
  EXPECT_EQ(w.run().end, run_end::finding);
  EXPECT_EQ(w.found()->invariant, "crash");
  EXPECT_NE(w.found()->message.find("r0.thrower.0 threw: boom"), std::string::npos);
}

TEST(World, VirtualTimeJumpsWhenEveryoneWaits) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  std::uint64_t woke_at = 0;
  w.spawn({0, "sleeper", 0}, [&w, &woke_at] {
    w.wait_virtual(1'000'000);
    woke_at = w.now_us();
  });
  EXPECT_EQ(w.run().end, run_end::quiescent);
  EXPECT_EQ(woke_at, 1'000'000u);
}

TEST(World, ManyWorldsRunOneAfterAnotherInOneThread) {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    ASSERT_EQ(run_random(seed).outcome.end, run_end::quiescent) << seed;
  }
}

}  // namespace
}  // namespace kvsim::sim::world_test

namespace kvsim::sim::world_test {
namespace {

// The core hands over events it has just built (event_sink::emit_built); the world's log
// takes them without a copy and holds the same event emit() would have logged. A sink that
// overrides only emit() (the real backend's log) still sees every one.
TEST(World, TheCoresBuiltEventsReachTheLogAsEmittedOnes) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  const core::event allocated{1, core::pages_allocated{{7, 0}, {3, 4}}};
  w.spawn({1, "ledger", 0}, [&w, &allocated] {
    w.core_sink().emit(allocated);
    core::event built = allocated;
    w.core_sink().emit_built(std::move(built));
  });
  w.run();
  std::vector<core::event> logged;
  for (const sim_event& e : w.events()) {
    if (const auto* decided = std::get_if<core_decided>(&e.body)) logged.push_back(decided->what);
  }
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(core::describe(logged[0]), core::describe(allocated));
  EXPECT_EQ(core::describe(logged[1]), core::describe(allocated));

  struct emit_only : core::event_sink {
    std::vector<core::event> seen;
    void emit(const core::event& e) override { seen.push_back(e); }
  } sink;
  core::event built = allocated;
  static_cast<core::event_sink&>(sink).emit_built(std::move(built));
  ASSERT_EQ(sink.seen.size(), 1u);
  EXPECT_EQ(core::describe(sink.seen[0]), core::describe(allocated));
}

}  // namespace
}  // namespace kvsim::sim::world_test
