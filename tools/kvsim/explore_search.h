#pragma once
// One search of `kvsim explore`: a scenario under one variant and strategy, over this shard's
// seeds, until its run or time budget is spent (or, when asked, until the first finding).
// With jobs > 1 the seeds are split among forked worker processes (every world is
// single-threaded, so processes, not threads, scale it); each reports every run to the parent
// over a pipe, and writes the traces of its findings itself, atomically and with signals held
// off, so a search stopped or killed mid-way never leaves a partial trace.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/variant.h"
#include "properties/all_checkers.h"
#include "scenarios/code_probes.h"
#include "spec/scenario_spec.h"
#include "sim/checker.h"
#include "tools/kvsim/seed_plan.h"
#include "tools/kvsim/strategy_spec.h"

namespace kvsim::tools {

struct search_request {
  scenarios::scenario_spec spec;
  core::variant variant;
  std::string variant_label;  // as shown: "safe", "B1", "canary"
  strategy_spec strategy;
  std::optional<std::uint64_t> max_seed;  // --runs N: seeds 1..N (this shard's share of them)
  std::optional<double> budget_seconds;   // --budget
  shard_spec shard;
  std::uint64_t jobs = 1;
  bool stop_at_first_finding = false;
  std::optional<std::filesystem::path> out_dir;  // where finding traces go
  std::uint64_t traces_max = 10;                 // per job: the first findings only
  // --generate: every seed draws its own scenario (scenarios::generate_scenario); `spec` is
  // then only the row's name.
  bool generate = false;
  properties::checker_family checkers = properties::checker_family::all;  // --checkers
  // A row that expects a bug expects it as this invariant: findings of any other invariant
  // are counted apart (`found-other`), and stop_at_first_finding waits for this one.
  std::optional<std::string> wanted_invariant = std::nullopt;
  std::uint32_t max_faults = 1;  // dpor: environment faults per run, at most
  // --catalogue as given (empty: the default one): the reproduce commands repeat it.
  std::string catalogue;
};

struct search_result {
  std::uint64_t runs = 0;
  std::uint64_t findings = 0;
  double seconds = 0;
  std::optional<double> seconds_to_first_finding;
  std::optional<std::uint64_t> runs_to_first_finding;  // runs done when it came in
  std::optional<std::uint64_t> first_seed;
  std::optional<sim::finding> first;  // the first finding (of the wanted invariant, if one is)
  // With a wanted invariant: findings of other invariants (counted in `findings` too).
  std::uint64_t other_findings = 0;
  std::optional<sim::finding> first_other;
  std::optional<std::uint64_t> first_other_seed;
  // The traces written (--out), lowest seed (dpor: run) first: the first traces_max
  // findings', and the first finding's and first other finding's whichever they are.
  std::vector<std::string> trace_files;
  std::optional<std::string> first_trace;        // the first finding's, when written
  std::optional<std::string> first_other_trace;  // the first other finding's, when written
  // random and pct: every counted finding's seed and invariant, in seed order (at most the
  // first 1000: finding_seeds_truncated), so shards merge into the unsharded counts.
  struct finding_seed {
    std::uint64_t seed = 0;
    std::string invariant;
  };
  std::vector<finding_seed> finding_seeds;
  bool finding_seeds_truncated = false;
  // Ctrl-C or SIGTERM ended the search before its budget: it reports what ran.
  bool interrupted = false;
  // A worker process died (a signal, or an exit without its error line), so the search
  // stopped, `interrupted` too: the line that says which worker and how. kvsim explore
  // exits 4 after writing its reports.
  std::optional<std::string> worker_died;
  // dpor only
  std::optional<bool> exhausted;
  std::uint64_t pruned = 0;
  // dpor only
  std::optional<std::uint64_t> distinct_states;    // up to the order of independent steps
  std::optional<std::uint64_t> distinct_outcomes;  // distinct terminal states
  std::optional<std::uint32_t> max_faults;
  std::uint64_t sleep_blocked = 0;
  // The deviation bound of the stage that found the first finding (empty: the full search).
  std::optional<std::uint32_t> deviation_bound;
  // Code probes (scenarios/code_probes.h): hits summed over the search's runs.
  scenarios::probe_hits probes{};
};

using progress_fn = std::function<void(const search_result& so_far)>;

search_result run_search(const search_request& request, const progress_fn& progress);

// The file a finding's trace is written to: DIR/<scenario>.<variant>.<strategy>.seed<N>.json
// for random and pct, ...<strategy>.run<N>.json for dpor (N: the run's index; their
// runs share one seed).
std::filesystem::path trace_path(const std::filesystem::path& dir, const search_request& request,
                                 std::uint64_t seed_or_run);

}  // namespace kvsim::tools
