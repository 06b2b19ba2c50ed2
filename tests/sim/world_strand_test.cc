// Strands (sim::world::spawn_on_strand): actors of one strand run one at a time from one
// blocking wait to the next, as coroutines of one thread do. A step keeps the strand (others
// may run there, no other member of it); a wait or a return gives it back. Every test here
// fails with the strand taken away (spawn_on_strand replaced by plain spawn in `join`), except
// where it says it holds either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/search/dpor.h"
#include "sim/search/first_choice.h"
#include "sim/search/random_walk.h"
#include "sim/search/replay.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim::world_strand_test {
namespace {

// An actor of rank 0 named `role` on `strand`: the one place these tests put actors on a
// strand (swap in w.spawn here to see every test below go red).
actor_id join(world& w, const std::string& role, std::function<void()> body, std::uint32_t strand) {
  return w.spawn_on_strand({0, role, 0}, std::move(body), strand);
}

// What the actors did, in the order they did it: a section's begin ('b') and end ('e'), or
// anything else ('s').
struct mark {
  std::string who;
  char what = 's';
  friend bool operator==(const mark&, const mark&) = default;
  friend void PrintTo(const mark& m, std::ostream* os) { *os << m.who << ':' << m.what; }
};
using marks = std::vector<mark>;

// `rounds` times: begin, `steps` preemption points, end, then a wait of 1us.
std::function<void()> sections(world& w, marks& log, std::string who, int rounds, int steps) {
  return [&w, &log, who, rounds, steps] {
    for (int r = 0; r < rounds; ++r) {
      log.push_back({who, 'b'});
      for (int i = 0; i < steps; ++i) w.step();
      log.push_back({who, 'e'});
      w.wait_virtual(1);
    }
  };
}

// Marks `steps` preemption points, never waiting.
std::function<void()> stepper(world& w, marks& log, std::string who, int steps) {
  return [&w, &log, who, steps] {
    for (int i = 0; i < steps; ++i) {
      log.push_back({who, 's'});
      w.step();
    }
  };
}

// True when a mark of one of `intruders` falls inside an open section of one of `owners`
// other than itself.
bool intrudes(const marks& log, const std::set<std::string>& owners,
              const std::set<std::string>& intruders) {
  std::set<std::string> open;
  for (const mark& m : log) {
    if (intruders.contains(m.who) &&
        std::any_of(open.begin(), open.end(), [&](const std::string& o) { return o != m.who; })) {
      return true;
    }
    if (!owners.contains(m.who)) continue;
    if (m.what == 'b') open.insert(m.who);
    if (m.what == 'e') open.erase(m.who);
  }
  return false;
}

std::size_t index_of(const marks& log, const mark& m) {
  return static_cast<std::size_t>(std::find(log.begin(), log.end(), m) - log.begin());
}

// A random walk that also shows each schedule request to `look` (so it lists the options).
class watched_walk final : public strategy {
 public:
  watched_walk(std::uint64_t seed, std::function<void(const decision_request&)> look)
      : walk_(seed), look_(std::move(look)) {}
  std::string name() const override { return "watched"; }
  std::uint32_t choose(const decision_request& request) override {
    if (request.kind == decision_kind::schedule) look_(request);
    return walk_.choose(request);
  }

 private:
  random_walk walk_;
  std::function<void(const decision_request&)> look_;
};

// Takes option 0 first, then always the last option (the newest actor or delivery).
class first_then_last final : public strategy {
 public:
  std::string name() const override { return "first_then_last"; }
  std::uint32_t choose(const decision_request& request) override {
    return std::exchange(first_, false) ? 0 : request.options - 1;
  }

 private:
  bool first_ = true;
};

// --- exclusion on a strand, and only on it -------------------------------------------------

// Two members of strand 1 (a, b) in sections of 4 steps, and c, on no strand, stepping.
struct strand_pair_run {
  run_outcome outcome;
  marks log;
  std::vector<decision> decisions;
  std::vector<std::string> event_lines;
};

strand_pair_run run_strand_pair(strategy& chooser, bool on_strand) {
  world w(chooser, world_config{});
  strand_pair_run run;
  for (const char* who : {"a", "b"}) {
    auto body = sections(w, run.log, who, 3, 4);
    if (on_strand) {
      join(w, who, std::move(body), 1);
    } else {
      w.spawn({0, who, 0}, std::move(body));
    }
  }
  w.spawn({1, "c", 0}, stepper(w, run.log, "c", 12));
  run.outcome = w.run();
  run.decisions = w.decisions();
  for (const sim_event& e : w.events()) run.event_lines.push_back(describe(e, w.actor_names()));
  return run;
}

TEST(WorldStrand, MembersOfAStrandNeverRunInsideEachOthersSectionsButOthersDo) {
  int c_inside = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    random_walk chooser(seed);
    const strand_pair_run run = run_strand_pair(chooser, true);
    ASSERT_EQ(run.outcome.end, run_end::quiescent) << "seed " << seed;
    ASSERT_EQ(run.log.size(), 2u * 3 * 2 + 12) << "seed " << seed;
    EXPECT_FALSE(intrudes(run.log, {"a", "b"}, {"a", "b"})) << "seed " << seed;
    c_inside += intrudes(run.log, {"a", "b"}, {"c"});
  }
  EXPECT_GT(c_inside, 0) << "an actor on no strand runs at a strand member's steps";
}

// The test above is not vacuous: its actors, on no strand, interleave (plain spawn here).
TEST(WorldStrand, WithoutAStrandTheSameActorsInterleave) {
  int interleaved = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    random_walk chooser(seed);
    const strand_pair_run run = run_strand_pair(chooser, false);
    ASSERT_EQ(run.outcome.end, run_end::quiescent) << "seed " << seed;
    interleaved += intrudes(run.log, {"a", "b"}, {"a", "b"});
  }
  EXPECT_GT(interleaved, 0) << "the strand test above would hold without strands";
}

// The parked members are no options of any decision: while a holds the strand (from its
// first run to its first wait), b is never offered, though c is.
TEST(WorldStrand, AParkedMemberIsNoOptionOfAnyDecision) {
  int offered_c = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    bool a_holds = false;
    int offered_b = 0;
    watched_walk chooser(seed, [&](const decision_request& request) {
      if (!a_holds) return;
      const auto has = [&](actor_id id) {
        return std::find(request.subjects.begin(), request.subjects.end(), id) !=
               request.subjects.end();
      };
      offered_b += has(1);
      offered_c += has(2);
    });
    world w(chooser, world_config{});
    join(w, "a", [&] {
      a_holds = true;
      for (int i = 0; i < 6; ++i) w.step();
      a_holds = false;
      w.wait_virtual(1);
    }, 1);
    join(w, "b", [&] { w.step(); }, 1);
    w.spawn({1, "c", 0}, [&] {
      for (int i = 0; i < 6; ++i) w.step();
    });
    ASSERT_EQ(w.run().end, run_end::quiescent);
    EXPECT_EQ(offered_b, 0) << "seed " << seed;
  }
  EXPECT_GT(offered_c, 0);
}

TEST(WorldStrand, TwoStrandsDoNotExcludeEachOther) {
  int across = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    random_walk chooser(seed);
    world w(chooser, world_config{});
    marks log;
    join(w, "a1", sections(w, log, "a1", 2, 4), 1);
    join(w, "a2", sections(w, log, "a2", 2, 4), 1);
    join(w, "b1", sections(w, log, "b1", 2, 4), 2);
    join(w, "b2", sections(w, log, "b2", 2, 4), 2);
    ASSERT_EQ(w.run().end, run_end::quiescent) << "seed " << seed;
    EXPECT_FALSE(intrudes(log, {"a1", "a2"}, {"a1", "a2"})) << "seed " << seed;
    EXPECT_FALSE(intrudes(log, {"b1", "b2"}, {"b1", "b2"})) << "seed " << seed;
    across += intrudes(log, {"a1", "a2"}, {"b1", "b2"});
  }
  EXPECT_GT(across, 0) << "strand 2 runs inside strand 1's sections on some seed";
}

// --- a wait gives the strand back; a member that waits forever is a deadlock -------------

// a waits on a queue; b (same strand) waits out the time until a waits, notifies, and steps
// on: a, woken, runs only once b has returned.
TEST(WorldStrand, AMemberWaitingOnAQueueGivesItsStrandBack) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    random_walk chooser(seed);
    world w(chooser, world_config{});
    wait_queue mailbox(w, "mailbox of a");
    marks log;
    join(w, "a", [&] {
      log.push_back({"a", 'b'});  // waits
      mailbox.wait();
      log.push_back({"a", 'e'});  // woken
    }, 1);
    join(w, "b", [&] {
      while (mailbox.empty()) w.wait_virtual(1);
      mailbox.notify_all();
      log.push_back({"b", 's'});  // notified
      for (int i = 0; i < 4; ++i) w.step();
      log.push_back({"b", 'e'});  // done
    }, 1);
    const run_outcome outcome = w.run();
    ASSERT_EQ(outcome.end, run_end::quiescent)
        << "seed " << seed << ": " << (w.found() ? w.found()->message : "");
    EXPECT_EQ(log, (marks{{"a", 'b'}, {"b", 's'}, {"b", 'e'}, {"a", 'e'}})) << "seed " << seed;
  }
}

// Holds either way (a strand must hide no deadlock): b's "has returned" fails where a wait
// would not give the strand back (b, parked, would never run).
TEST(WorldStrand, AMemberThatWaitsForeverIsStillADeadlock) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    random_walk chooser(seed);
    world w(chooser, world_config{});
    wait_queue mailbox(w, "mailbox of a");
    join(w, "a", [&] { mailbox.wait(); }, 1);
    join(w, "b", [&] {
      for (int i = 0; i < 3; ++i) w.step();
    }, 1);
    ASSERT_EQ(w.run().end, run_end::finding) << "seed " << seed;
    ASSERT_TRUE(w.found().has_value());
    EXPECT_EQ(w.found()->invariant, "deadlock");
    EXPECT_NE(w.found()->message.find("nothing can run; r0.a.0 waits on mailbox of a"),
              std::string::npos)
        << w.found()->message;
    const auto& details = w.found()->details;
    EXPECT_NE(std::find(details.begin(), details.end(), "r0.b.0 has returned"), details.end());
  }
}

// --- a member spawned mid-run waits for the holder ---------------------------------------

// h holds strand 1 through 6 steps; s (no strand) spawns n on strand 1 at a random point:
// whenever that lands inside h's section, n runs only after h's section ended.
TEST(WorldStrand, AMemberSpawnedMidRunWaitsForTheHolderToWait) {
  int spawned_inside = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    random_walk chooser(seed);
    world w(chooser, world_config{});
    marks log;
    join(w, "h", sections(w, log, "h", 1, 6), 1);
    w.spawn({1, "s", 0}, [&] {
      w.step();
      join(w, "n", [&] { log.push_back({"n", 's'}); }, 1);
      log.push_back({"s", 's'});  // spawned
    });
    ASSERT_EQ(w.run().end, run_end::quiescent) << "seed " << seed;
    const std::size_t begin = index_of(log, {"h", 'b'});
    const std::size_t end = index_of(log, {"h", 'e'});
    const std::size_t spawned = index_of(log, {"s", 's'});
    const std::size_t ran = index_of(log, {"n", 's'});
    ASSERT_LT(ran, log.size()) << "seed " << seed;
    if (begin < spawned && spawned < end) {
      ++spawned_inside;
      EXPECT_GT(ran, end) << "seed " << seed;
    }
  }
  EXPECT_GT(spawned_inside, 0) << "the spawn fell inside h's section on some seed";
}

// The holder spawns the new member itself, mid-section: the newest actor, which a strategy
// that takes the last option would run at once, runs only after the holder waits.
TEST(WorldStrand, AMemberSpawnedByTheHolderRunsAfterTheHolderWaits) {
  first_then_last chooser;
  world w(chooser, world_config{});
  marks log;
  join(w, "h", [&] {
    log.push_back({"h", 'b'});
    join(w, "n", [&] { log.push_back({"n", 's'}); }, 1);
    for (int i = 0; i < 4; ++i) w.step();
    log.push_back({"h", 'e'});
    w.wait_virtual(1);
  }, 1);
  ASSERT_EQ(w.run().end, run_end::quiescent);
  EXPECT_EQ(log, (marks{{"h", 'b'}, {"h", 'e'}, {"n", 's'}}));
}

// --- a run that ends with parked members tears down cleanly ------------------------------

// r (no strand) reports a finding after 2 steps; a and b hold strand 1 in turn. On the seeds
// where the report lands inside a's first section with b not yet started, b is parked then:
// every live actor is unwound (actor_finished, cancelled) and the world goes away normally.
TEST(WorldStrand, AFindingWhileMembersAreParkedTearsDownCleanly) {
  int parked_at_report = 0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    random_walk chooser(seed);
    marks log;
    bool b_parked = false;
    std::size_t cancelled = 0;
    std::size_t returned = 0;
    {
      world w(chooser, world_config{});
      join(w, "a", sections(w, log, "a", 2, 5), 1);
      join(w, "b", sections(w, log, "b", 2, 5), 1);
      w.spawn({1, "r", 0}, [&] {
        w.step();
        w.step();
        b_parked = log.size() == 1 && log[0] == mark{"a", 'b'};
        w.report(finding{"test", "reported by r", {}, {}});
        w.step();
        ADD_FAILURE() << "r runs on after its finding";
      });
      ASSERT_EQ(w.run().end, run_end::finding) << "seed " << seed;
      EXPECT_EQ(w.found()->message, "reported by r");
      for (const sim_event& e : w.events()) {
        if (const auto* f = std::get_if<actor_finished>(&e.body)) {
          (f->cancelled ? cancelled : returned) += 1;
        }
      }
    }
    EXPECT_EQ(cancelled + returned, 3u) << "seed " << seed;
    EXPECT_FALSE(intrudes(log, {"a", "b"}, {"a", "b"})) << "seed " << seed;
    if (b_parked) {
      ++parked_at_report;
      EXPECT_EQ(cancelled, 3u) << "seed " << seed;
      EXPECT_EQ(log, (marks{{"a", 'b'}})) << "seed " << seed << ": b never ran";
    }
  }
  EXPECT_GT(parked_at_report, 0) << "a report with b parked on some seed";
}

// A holder that never waits keeps its strand to the step limit: the livelock names the
// parked member as such, b never ran, and teardown unwinds both.
TEST(WorldStrand, TheStepLimitWithAParkedMemberIsALivelockThatTearsDownCleanly) {
  first_then_last chooser;
  bool b_ran = false;
  {
    world w(chooser, world_config{200, 64 * 1024, {}});
    join(w, "spinner", [&] {
      for (;;) w.step();
    }, 1);
    join(w, "b", [&] { b_ran = true; }, 1);
    ASSERT_EQ(w.run().end, run_end::finding);
    ASSERT_TRUE(w.found().has_value());
    EXPECT_EQ(w.found()->invariant, "livelock");
    EXPECT_EQ(w.found()->message,
              "livelock: no quiescence within the step limit of 200 steps (t=0us); "
              "r0.spinner.0 is ready to run; r0.b.0 is ready, once its strand's running "
              "actor waits");
    std::size_t cancelled = 0;
    for (const sim_event& e : w.events()) {
      if (const auto* f = std::get_if<actor_finished>(&e.body)) cancelled += f->cancelled;
    }
    EXPECT_EQ(cancelled, 2u);
  }
  EXPECT_FALSE(b_ran);
}

// --- determinism ----------------------------------------------------------------------------

TEST(WorldStrand, TheSameSeedGivesTheSameRunWithStrands) {
  std::set<std::uint64_t> hashes;
  int changed_by_strand = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    random_walk first_chooser(seed);
    random_walk second_chooser(seed);
    const strand_pair_run first = run_strand_pair(first_chooser, true);
    const strand_pair_run second = run_strand_pair(second_chooser, true);
    EXPECT_EQ(first.decisions, second.decisions) << "seed " << seed;
    EXPECT_EQ(decision_hash(first.decisions), decision_hash(second.decisions));
    EXPECT_EQ(first.event_lines, second.event_lines) << "seed " << seed;
    EXPECT_EQ(first.log, second.log) << "seed " << seed;
    hashes.insert(decision_hash(first.decisions));
    // A strict replay of the decisions is the same run (the options offered are the same).
    replay again(first.decisions, replay_mode::strict);
    const strand_pair_run replayed = run_strand_pair(again, true);
    EXPECT_EQ(replayed.outcome.end, run_end::quiescent) << "seed " << seed;
    EXPECT_EQ(replayed.event_lines, first.event_lines) << "seed " << seed;
    // The strand is part of what is decided: the same seed without it runs otherwise.
    random_walk plain_chooser(seed);
    changed_by_strand += run_strand_pair(plain_chooser, false).decisions != first.decisions;
  }
  EXPECT_GT(hashes.size(), 25u);
  EXPECT_GT(changed_by_strand, 0);
}

// --- the whole schedule space of a small strand world (every option at every decision) --------

dpor_result search_all(const dpor_run_fn& run, reduction mode) {
  dpor_options options;
  options.mode = mode;
  return dpor_search(run, options);
}

// a and b on strand 1 (sections of 2 steps), c on no strand (3 steps): in every schedule
// brute force runs, a and b keep their sections whole, and in some c runs inside one.
TEST(WorldStrand, EveryScheduleKeepsAStrandsSectionsWhole) {
  auto runs = std::make_shared<int>(0);
  auto broken = std::make_shared<int>(0);
  auto c_inside = std::make_shared<int>(0);
  const dpor_run_fn run = [=, stacks = std::make_shared<fiber_stacks>()](
                              strategy& chooser, const std::function<void(const world&)>& inspect) {
    world_config config;
    config.stack_pool = stacks.get();
    world w(chooser, config);
    marks log;
    join(w, "a", sections(w, log, "a", 1, 2), 1);
    join(w, "b", sections(w, log, "b", 1, 2), 1);
    w.spawn({1, "c", 0}, stepper(w, log, "c", 3));
    const run_end end = w.run().end;
    ++*runs;
    *broken += end != run_end::quiescent || intrudes(log, {"a", "b"}, {"a", "b"});
    *c_inside += intrudes(log, {"a", "b"}, {"c"});
    inspect(w);
  };
  const dpor_result all = search_all(run, reduction::none);
  ASSERT_TRUE(all.exhausted);
  EXPECT_EQ(*broken, 0) << "of " << *runs << " schedules";
  EXPECT_GT(*c_inside, 0);
}

// Two actors of one rank on one strand, each taking one step: brute force and sleep sets
// alone reach both orders of their turns (2 terminal states), and so must DPOR. Its one race
// is a's last step against b's first (both write the rank); at the state before a's last step
// b is parked, no option, so the reversal must start where a's turn began, where b was one
// (sim/search/dpor.cc, start_before_turn). Without that DPOR ran once.
dpor_run_fn two_turns() {
  return [stacks = std::make_shared<fiber_stacks>()](
             strategy& chooser, const std::function<void(const world&)>& inspect) {
    world_config config;
    config.stack_pool = stacks.get();
    world w(chooser, config);
    auto order = std::make_shared<std::vector<std::uint64_t>>();
    w.add_state_digest([order](const std::function<void(std::uint64_t)>& add) {
      for (const std::uint64_t who : *order) add(who);
    });
    for (const std::uint64_t who : {1u, 2u}) {
      join(w, who == 1 ? "a" : "b", [&w, order, who] {
        order->push_back(who);
        w.step();
      }, 1);
    }
    w.run();
    inspect(w);
  };
}

TEST(WorldStrand, DporReachesBothOrdersOfTwoTurnsOnAStrand) {
  const dpor_result brute = search_all(two_turns(), reduction::none);
  const dpor_result sleep = search_all(two_turns(), reduction::sleep_sets_only);
  const dpor_result reduced = search_all(two_turns(), reduction::dpor);
  ASSERT_EQ(brute.terminal_digests.size(), 2u);
  EXPECT_EQ(sleep.terminal_digests, brute.terminal_digests);
  EXPECT_EQ(reduced.terminal_digests, brute.terminal_digests) << reduced.runs << " dpor runs";
}

}  // namespace
}  // namespace kvsim::sim::world_strand_test
