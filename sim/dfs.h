#pragma once
// The older exhaustive search, kept for comparison: sim/dpor.h is the one explore's
// `--strategy dpor` runs, with declared footprints (sim/step_log.h) instead of the
// event-guessed ones below, and faults as choices instead of one fault profile.
//
// Bounded exhaustive search over a world's decision tree: stateless depth-first search in the
// style of VeriSoft (Godefroid, "Model Checking for Programming Languages using VeriSoft",
// POPL 1997). Nothing is snapshotted: every run builds a fresh world, replays a prefix of
// choices, then takes the first allowed option at every new decision; the search backtracks
// to the deepest decision with an untried allowed option.
//
// What branches: a schedule decision over every runnable subject (actors and deliveries); a
// fault decision over {no, yes} when its profile gives it a chance (fault_per_million > 0),
// else only "no"; a data decision over all of its options.
//
// Preemption bound (Musuvathi & Qadeer, "Iterative Context Bounding for Systematic Testing
// of Multithreaded Programs", PLDI 2007, the CHESS bound). What counts: the "last actor" is
// the actor chosen by the most recent schedule decision that chose an actor (deliveries are
// not actors and do not change it). A schedule decision that chooses an actor other than the
// last actor while the last actor is among its options is one preemption. So choosing a
// delivery is never one, nor is any choice once the last actor has blocked or returned (it
// is not among the options) -- except that an actor whose timer fired because nobody else
// could run is among the options again, and switching away from it then counts. Options that
// would exceed the bound are not explored (counted in beyond_bound).
//
// Partial-order reduction with sleep sets (Godefroid, "Partial-Order Methods for the
// Verification of Concurrent Systems", LNCS 1032, 1996): once option t is explored at a
// decision, t sleeps in the subtrees of that decision's later options, and stays asleep down
// a path for as long as every step taken is independent of it; a sleeping option is not
// chosen (counted in pruned). Dynamic POR (Flanagan & Godefroid, POPL 2005) and source sets
// (Abdulla, Aronis, Jonsson & Sagonas, "Optimal Dynamic Partial Order Reduction", POPL 2014)
// would also shrink the set of options explored at each decision and avoid runs that end
// with only sleeping options; this search does not implement them.
//
// Independence comes from what the world records (step_footprint below): two steps are
// independent when their footprints are disjoint. An actor's step touches its own rank and
// what its events name; a message delivery touches the receiving rank; gates, spawns racing
// for actor ids and sends racing for message ids are accounted for (dfs.cc). It is an
// approximation: state shared across ranks without an event is not seen (transfer_world
// reads on the decode rank whether a transfer of the prefill rank waits at a gate, and the
// prefill bootstrap reads whether every decode rank is done), so a step that read such state
// may be pruned in an order where it would have read something else. Checkers are assumed to
// give the same verdict for runs that differ only in the order of independent steps.
//
// Sleep sets with a preemption bound are not complete within the bound: the explored
// representative of a pruned order may need more preemptions than the pruned order did, and
// be cut by the bound (Coons, Musuvathi & McKinley, "Bounded Partial-Order Reduction",
// OOPSLA 2013). Measured with bound 2 on the safe core: hicache_local_active's reduced search
// reaches 44 of the 46 distinct per-rank outcomes the unreduced one reaches,
// hicache_local_missing's 10 of 11; unbounded, hicache_local_missing's reaches all 14. Use
// sleep_sets = false where the bound must be covered completely.
//
// A step's footprint is only known once it has run (the world reports events, not what an
// actor is about to do), so sleep sets of new decisions are settled after each run: a run
// prefers options that cannot be asleep, and a run that turns out to have taken a sleeping
// option is cut there (counted in sleep_blocked) and the search goes on from that decision.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/checker.h"
#include "sim/decision.h"
#include "sim/strategy.h"
#include "sim/world.h"

namespace kvsim::sim {

struct dfs_options {
  std::optional<std::uint32_t> preemption_bound;  // empty: unbounded
  bool sleep_sets = true;                          // partial-order reduction on/off
  std::uint64_t max_runs = 1'000'000;              // stop (not exhausted) after this many runs
  bool stop_at_first_finding = false;
};

struct dfs_result {
  bool exhausted = false;  // every (non-pruned) interleaving within the bound was run
  std::uint64_t runs = 0;
  std::uint64_t pruned = 0;    // options skipped because they were asleep
  std::uint64_t findings = 0;  // runs that ended with a finding
  std::optional<finding> first_finding;
  std::vector<decision> first_finding_decisions;  // replays strictly with sim::replay
  std::uint64_t first_finding_run = 0;            // runs done when it came (1 = the first)
  // Options not explored because they would exceed the preemption bound.
  std::uint64_t beyond_bound = 0;
  // Runs that took an option found asleep once the run's footprints were known: redundant
  // from that decision on (the search resumes there). Included in `runs`.
  std::uint64_t sleep_blocked = 0;
  std::uint64_t decisions_max = 0;  // decisions of the longest run
  // The world did not repeat a replayed prefix (the scenario is not deterministic): the
  // search stopped at the first mismatch.
  std::optional<divergence> nondeterminism;
};

// Runs one fresh world to its end with `chooser` taking every decision, then calls
// `inspect(w)` on the finished world (before destroying it).
using dfs_run_fn =
    std::function<void(strategy& chooser, const std::function<void(const world&)>& inspect)>;

// `stop` (optional) is asked before every run: true ends the search, not exhausted (a time
// budget, an interrupt).
dfs_result dfs_search(const dfs_run_fn& run_once, const dfs_options& options,
                      const std::function<bool()>& stop = {});

// What one step touched, as far as the world's records tell: the ranks and collective groups
// its events name, the world-wide counters it drew from (actor ids, message ids), or
// everything (`global`: gates, events of the world itself other than message deliveries,
// event kinds dfs.cc does not know).
struct step_footprint {
  bool global = false;
  std::vector<std::uint64_t> touched;  // sorted, unique tokens (see dfs.cc)

  void add(std::uint64_t token);
  void merge(const step_footprint& other);
  bool conflicts_with(const step_footprint& other) const;
};

// The footprint of each step of a finished run: entry j is the step chosen by the j-th
// schedule decision (its events carry step j + 1). Every actor step touches its own rank; a
// delivery step touches what its events name (a message delivery: the receiving rank), and
// is global when it emitted nothing. Spawns are not visible here (dfs_search adds them from
// the decisions' options).
std::vector<step_footprint> step_footprints(const world& w);

}  // namespace kvsim::sim
