// Bounded exhaustive search (sim/dfs.h) on toy worlds built directly: the number of runs
// without reduction is the number of interleavings, sleep sets cut it when the actors touch
// nothing in common, a race that needs one order is found with and without the reduction
// (which reaches every outcome the full search reaches), a finding replays strictly, and the
// preemption bound orders the searches by size.
#include "sim/dfs.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <string>

#include "sim/first_choice.h"
#include "sim/replay.h"

namespace kvsim::sim::dfs_test {
namespace {

using inspect_fn = std::function<void(const world&)>;

std::uint64_t binomial(std::uint64_t n, std::uint64_t k) {
  std::uint64_t c = 1;
  for (std::uint64_t i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// An actor that takes `transitions` steps writing pages of its own rank only: a preemption
// point between consecutive steps, nothing shared with any other rank.
void spawn_local_worker(world& w, core::rank_id rank, std::uint32_t transitions) {
  w.spawn({rank, "worker", 0}, [&w, rank, transitions] {
    for (std::uint32_t i = 0; i < transitions; ++i) {
      if (i > 0) w.step();
      w.emit(page_written{rank, i, core::room_key{rank, 0}, i});
    }
  });
}

// Two such actors on ranks 0 and 1.
dfs_run_fn independent_pair(std::uint32_t transitions) {
  return [transitions](strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, world_config{});
    spawn_local_worker(w, 0, transitions);
    spawn_local_worker(w, 1, transitions);
    w.run();
    inspect(w);
  };
}

// A writer (rank 0) moves a counter kept on rank 2 from 0 to 1 and, one step later, to 2; a
// reader (rank 1) reads it once and reports a finding when it sees the transient 1. Both
// name rank 2 in their events (a page written and a page read there, the page's logical
// index carrying the value), so they are dependent; only "1, read, 2" shows the bug, and
// that order needs one preemption of the writer. A bystander on rank 3 takes
// `bystander_steps` steps of its own.
dfs_run_fn racing_pair(std::uint32_t bystander_steps) {
  return [bystander_steps](strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, world_config{});
    std::uint32_t counter = 0;
    const core::room_key owner{2, 0};
    w.spawn({0, "writer", 0}, [&w, &counter, owner] {
      counter = 1;
      w.emit(page_written{2, 0, owner, counter});
      w.step();
      counter = 2;
      w.emit(page_written{2, 0, owner, counter});
    });
    w.spawn({1, "reader", 0}, [&w, &counter, owner] {
      w.emit(page_read{2, 0, owner, counter, counter != 1, std::nullopt});
      if (counter == 1) w.report(finding{"toy", "the reader saw the transient 1", {}, {}});
    });
    if (bystander_steps > 0) spawn_local_worker(w, 3, bystander_steps);
    w.run();
    inspect(w);
  };
}

dfs_options unbounded(bool sleep_sets) {
  dfs_options options;
  options.sleep_sets = sleep_sets;
  return options;
}

dfs_options bounded(std::uint32_t preemptions, bool sleep_sets) {
  dfs_options options = unbounded(sleep_sets);
  options.preemption_bound = preemptions;
  return options;
}

TEST(Dfs, WithoutReductionEveryInterleavingOfTwoIndependentActorsRunsOnce) {
  for (std::uint32_t k : {1u, 2u, 3u, 4u}) {
    const dfs_result all = dfs_search(independent_pair(k), unbounded(false));
    EXPECT_TRUE(all.exhausted) << "k=" << k;
    EXPECT_EQ(all.runs, binomial(2 * k, k)) << "k=" << k;
    EXPECT_EQ(all.pruned, 0u);
    EXPECT_EQ(all.findings, 0u);
  }
}

// Sleep sets alone (no persistent sets) on two independent actors of k steps: one complete
// run, plus one run per earlier switch point that ends when only the sleeping actor is left
// (k + 1 runs in all); the sleeping actor is skipped at k decisions of each of those k runs.
TEST(Dfs, SleepSetsRunTwoIndependentActorsInKPlusOneRuns) {
  for (std::uint32_t k : {1u, 2u, 3u, 4u}) {
    const dfs_result reduced = dfs_search(independent_pair(k), unbounded(true));
    std::cout << "independent pair, k=" << k << ": " << binomial(2 * k, k)
              << " runs without sleep sets, " << reduced.runs << " with (" << reduced.pruned
              << " pruned, " << reduced.sleep_blocked << " sleep-blocked)\n";
    EXPECT_TRUE(reduced.exhausted) << "k=" << k;
    EXPECT_EQ(reduced.runs, k + 1) << "k=" << k;
    EXPECT_EQ(reduced.pruned, std::uint64_t{k} * k) << "k=" << k;
    EXPECT_EQ(reduced.sleep_blocked, k) << "k=" << k;
  }
}

TEST(Dfs, ARaceThatNeedsOneOrderIsFoundWithAndWithoutSleepSets) {
  const dfs_result plain = dfs_search(racing_pair(2), unbounded(false));
  const dfs_result reduced = dfs_search(racing_pair(2), unbounded(true));
  std::cout << "race with a bystander: " << plain.runs << " runs without sleep sets ("
            << plain.findings << " finding), " << reduced.runs << " with (" << reduced.findings
            << " finding, " << reduced.pruned << " pruned)\n";
  for (const dfs_result* result : {&plain, &reduced}) {
    EXPECT_TRUE(result->exhausted);
    ASSERT_TRUE(result->first_finding.has_value());
    EXPECT_EQ(result->first_finding->invariant, "toy");
  }
  // Writer 2 steps, reader 1, bystander 2: 5! / (2! 1! 2!) = 30 orders. The 10 with the
  // reader between the writer's steps end at the read: 6 distinct runs (the bystander's
  // steps before the read), so 20 + 6 runs, 6 with the finding. Sleep sets: 8 runs.
  EXPECT_EQ(plain.runs, 26u);
  EXPECT_EQ(plain.findings, 6u);
  EXPECT_LT(reduced.runs, plain.runs);
  EXPECT_GT(reduced.pruned, 0u);
}

// What a run did, per rank: each actor's events in order, grouped by the actor's rank
// (a delivery's under the receiving rank), without step numbers; for a run cut short by a
// finding, only the finding (how far independent actors got before it is no outcome). Runs
// that differ only in the order of steps with disjoint footprints (each touches its own rank
// at least) have the same signature, so the reduction must reach every signature the full
// search reaches.
using signature = std::map<core::rank_id, std::vector<std::string>>;

signature per_rank_events(const world& w) {
  signature s;
  if (w.found()) {
    s[0].push_back(w.found()->message);
    return s;
  }
  for (const sim_event& e : w.events()) {
    std::string text = describe(e, w.actor_names());
    text = text.substr(text.find(' ', std::string("step ").size()) + 1);  // drop "step N "
    core::rank_id rank = 0xffff;
    if (e.actor != no_actor) rank = w.actor_names()[e.actor].rank;
    if (const auto* delivered = std::get_if<message_delivered>(&e.body)) rank = delivered->to;
    s[rank].push_back(std::move(text));
  }
  return s;
}

TEST(Dfs, SleepSetsReachEveryOutcomeTheFullSearchReaches) {
  std::map<bool, std::set<signature>> outcomes;
  for (const bool sleep_sets : {false, true}) {
    const dfs_run_fn run = racing_pair(2);
    const dfs_result result = dfs_search(
        [&](strategy& chooser, const inspect_fn& inspect) {
          run(chooser, [&](const world& w) {
            outcomes[sleep_sets].insert(per_rank_events(w));
            inspect(w);
          });
        },
        unbounded(sleep_sets));
    EXPECT_TRUE(result.exhausted);
  }
  // The reader sees 0, 1 (the finding) or 2.
  EXPECT_EQ(outcomes[false].size(), 3u);
  EXPECT_EQ(outcomes[true], outcomes[false]);
}

TEST(Dfs, TheRaceNeedsOnePreemption) {
  const dfs_result none = dfs_search(racing_pair(0), bounded(0, true));
  EXPECT_TRUE(none.exhausted);
  EXPECT_FALSE(none.first_finding.has_value());
  EXPECT_GT(none.beyond_bound, 0u);
  const dfs_result one = dfs_search(racing_pair(0), bounded(1, true));
  EXPECT_TRUE(one.exhausted);
  ASSERT_TRUE(one.first_finding.has_value());
}

TEST(Dfs, AFindingsDecisionsReplayStrictlyToTheSameFinding) {
  dfs_options options = unbounded(true);
  options.stop_at_first_finding = true;
  const dfs_result result = dfs_search(racing_pair(2), options);
  ASSERT_TRUE(result.first_finding.has_value());
  EXPECT_FALSE(result.exhausted);
  replay again(result.first_finding_decisions, replay_mode::strict);
  std::optional<finding> replayed;
  bool diverged = true;
  racing_pair(2)(again, [&](const world& w) {
    replayed = w.found();
    diverged = w.diverged().has_value();
  });
  EXPECT_FALSE(diverged);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_EQ(*replayed, *result.first_finding);
}

// Bound 0 lets only the first choice of actor vary: two runs. Each further preemption
// allows more switch points, up to every interleaving.
TEST(Dfs, APreemptionBoundOrdersTheSearchesBySize) {
  constexpr std::uint32_t k = 4;
  const dfs_result zero = dfs_search(independent_pair(k), bounded(0, false));
  const dfs_result two = dfs_search(independent_pair(k), bounded(2, false));
  const dfs_result all = dfs_search(independent_pair(k), unbounded(false));
  std::cout << "independent pair, k=4, no sleep sets: bound 0 " << zero.runs << " runs, bound 2 "
            << two.runs << ", unbounded " << all.runs << "\n";
  for (const dfs_result* result : {&zero, &two, &all}) EXPECT_TRUE(result->exhausted);
  EXPECT_EQ(zero.runs, 2u);
  EXPECT_LT(zero.runs, two.runs);
  EXPECT_LT(two.runs, all.runs);
  EXPECT_EQ(all.runs, binomial(2 * k, k));
  EXPECT_GT(two.beyond_bound, 0u);
}

TEST(Dfs, MaxRunsStopsTheSearchUnexhausted) {
  dfs_options options = unbounded(false);
  options.max_runs = 3;
  const dfs_result result = dfs_search(independent_pair(3), options);
  EXPECT_EQ(result.runs, 3u);
  EXPECT_FALSE(result.exhausted);
}

TEST(Dfs, AWorldThatDoesNotRepeatItsPrefixIsReportedAsNondeterministic) {
  int run = 0;
  const dfs_run_fn changing = [&run](strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, world_config{});
    // From the second run on, the rank 0 worker returns after one step: the replayed second
    // decision (rank 0 or rank 1 next) is no longer offered. (Not the first decision: a
    // world whose run ends before any actor ran does not return from run().)
    spawn_local_worker(w, 0, run == 0 ? 2 : 1);
    spawn_local_worker(w, 1, 2);
    ++run;
    w.run();
    inspect(w);
  };
  const dfs_result result = dfs_search(changing, unbounded(false));
  EXPECT_EQ(result.runs, 2u);
  EXPECT_FALSE(result.exhausted);
  ASSERT_TRUE(result.nondeterminism.has_value());
  EXPECT_EQ(result.nondeterminism->decision_index, 1u);
}

TEST(Dfs, AStepsFootprintNamesItsOwnRankAndTheRanksItsEventsName) {
  first_choice chooser;
  std::vector<step_footprint> footprints;
  racing_pair(1)(chooser, [&](const world& w) { footprints = step_footprints(w); });
  // Option 0 throughout: the writer sets 1 (its rank 0, the counter's rank 2), then 2 (the
  // same), the reader reads it (ranks 1 and 2), the bystander writes on rank 3.
  ASSERT_EQ(footprints.size(), 4u);
  for (const step_footprint& f : footprints) EXPECT_FALSE(f.global);
  EXPECT_TRUE(footprints[0].conflicts_with(footprints[1]));
  EXPECT_TRUE(footprints[1].conflicts_with(footprints[2])) << "both name rank 2";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(footprints[3].conflicts_with(footprints[i])) << "the bystander and step " << i;
  }
  step_footprint everything;
  everything.global = true;
  EXPECT_TRUE(footprints[3].conflicts_with(everything));
}

}  // namespace
}  // namespace kvsim::sim::dfs_test
