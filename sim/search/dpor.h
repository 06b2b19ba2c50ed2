#pragma once
// Exhaustive search with dynamic partial-order reduction: source-DPOR with sleep sets
// (Abdulla, Aronis, Jonsson & Sagonas, "Optimal Dynamic Partial Order Reduction", POPL 2014,
// Algorithm 1; the sleep sets are Godefroid's, "Partial-Order Methods for the Verification of
// Concurrent Systems", LNCS 1032, 1996). It runs at least one execution of every
// Mazurkiewicz trace (every class of runs equal up to the order of independent steps), and
// usually not many more.
//
// Stateless, like VeriSoft: every run builds a fresh world and replays a prefix of
// decisions. Independence is what the run's steps declared (sim/step_log.h): two steps are
// dependent when they touch a common object and one writes it; a time advance is a fence
// before every later step. After each run, every race (two dependent steps of different
// threads with nothing ordered between them) adds, at the state before the first, a thread
// that starts the reversed order unless one already does (the "initials" of source-DPOR).
//
// Threads are actors and deliveries, named by stable identities (step_log.h), so that a
// renaming of ids between runs does not matter. A step that also takes fault or data
// decisions branches on every allowed option below its schedule decision, like a plain DFS;
// sleeping threads carry the union of their step's footprints over those options.
//
// Faults as choices: with max_faults = K every fault opportunity of the world is a branch
// (fires or not) while the run has fired fewer than K faults; the scenario's abort is the
// client's choice of timing, not a fault of the environment, and always branches without
// counting. Run the world with a fault profile that turns on every kind the scenario allows
// (the rate only says "possible" here). An exhausted search then covers "every interleaving
// with at most K faults", within the preemption bound if one is given.
//
// The preemption bound (the CHESS bound: Musuvathi & Qadeer, PLDI 2007) may be put on top: options and
// race reversals beyond it are not explored (counted in beyond_bound); bounded DPOR is not
// complete within the bound (Coons, Musuvathi & McKinley, OOPSLA 2013), so the bound is a
// way to finish early, never the only one.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/checker.h"
#include "sim/decision.h"
#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::sim {

// How much of the reduction runs: the whole of it, sleep sets alone (every option that is not
// asleep, Godefroid's sleep-set search: a simpler reference with the same independence), or
// none (every option at every decision: brute force).
enum class reduction : std::uint8_t { dpor, sleep_sets_only, none };

struct dpor_options {
  std::optional<std::uint32_t> preemption_bound;  // empty: unbounded
  std::uint32_t max_faults = 0;                   // environment faults fired per run, at most
  // Delay bounding (Emmi, Qadeer & Rakamaric, "Delay-Bounded Scheduling", POPL 2011): at
  // most this many deviations from the default run (another thread than the one that ran
  // last, a fault that fires, a data choice other than the first). A way to find a bug that
  // needs few deviations fast, by raising the bound; never complete on its own.
  std::optional<std::uint32_t> deviation_bound;
  reduction mode = reduction::dpor;
  std::uint64_t max_runs = 1'000'000;  // stop (not exhausted) after this many runs
  bool stop_at_first_finding = false;
  // Keep the digest of every run's Mazurkiewicz trace (trace_classes): what the soundness
  // tests count runs against.
  bool collect_trace_classes = false;
};

struct dpor_result {
  bool exhausted = false;  // every run the reduction and the bounds require was run
  std::uint64_t runs = 0;
  // Runs given up at a decision where every option slept (each a redundant run; in `runs`).
  std::uint64_t sleep_blocked = 0;
  std::uint64_t pruned = 0;        // options never taken because they slept
  std::uint64_t beyond_bound = 0;  // options not taken because of the preemption or deviation bound
  std::uint64_t faults_cut = 0;    // fault options not taken: the run had fired max_faults
  std::uint64_t findings = 0;
  std::optional<finding> first_finding;
  std::vector<decision> first_finding_decisions;  // replays strictly with sim::replay
  std::uint64_t first_finding_run = 0;
  std::uint64_t decisions_max = 0;
  // Distinct states visited, up to the order of independent steps (each new step's prefix
  // as a trace class): an upper bound on the distinct world states. Counted up to 8,000,000.
  std::uint64_t distinct_states = 0;
  std::set<std::uint64_t> terminal_digests;  // world::terminal_digest of every finished run
  std::set<std::string> finding_invariants;  // of every run with a finding
  // collect_trace_classes only: of every run that ended without a finding (a finding stops
  // a run where its checker fires, so runs equal up to reordering end at different points).
  std::set<std::uint64_t> trace_classes;
  std::optional<divergence> nondeterminism;
};

// Runs one fresh world to its end with `chooser` taking every decision, then calls
// `inspect(w)` on the finished world (before destroying it).
using dpor_run_fn =
    std::function<void(strategy& chooser, const std::function<void(const world&)>& inspect)>;

// `stop` (optional) is asked before every run: true ends the search, not exhausted (a time
// budget).
dpor_result dpor_search(const dpor_run_fn& run_once, const dpor_options& options,
                        const std::function<bool()>& stop = {});

// The digest of a finished run's Mazurkiewicz trace: equal for two runs exactly when they
// run the same steps (each thread's steps with the same fault and data decisions) and order
// every two dependent steps alike. Needs the world's step log.
std::uint64_t trace_class_digest(const world& w);
// The same digest for each prefix of the run: entry k is the state after step k + 1, up to
// the order of independent steps (two runs with equal entries are in the same state).
std::vector<std::uint64_t> prefix_class_digests(const world& w);

}  // namespace kvsim::sim
