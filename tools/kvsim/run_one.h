#pragma once
// One run of a catalogue scenario, the unit every subcommand is built from: the world for
// the scenario's kind, every invariant checker attached, the strategy given, and afterwards
// everything a user may want from it (outcome, finding, decisions and their hash, the typed
// events for export, and the trace to write).
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
#include "sim/fault_profile.h"
#include "sim/search/strategy.h"
#include "sim/trace.h"
#include "sim/world.h"
#include "tools/kvsim/catalogue_location.h"

namespace kvsim::tools {

struct run_setup {
  scenarios::scenario_spec spec;
  core::variant variant;
  std::string strategy_name;  // recorded in the trace: "random", "pct:3", "dpor:2", "replay"
  std::uint64_t seed = 0;
  sim::fault_profile faults;  // usually drawn from the seed (faults_for)
  properties::checker_family checkers = properties::checker_family::all;
  // Where the run's fiber stacks come from: a search passes one pool to all of its runs, so
  // each run after the first reuses the stacks (sim/fiber_stacks.h). Null: the world's own.
  // Never part of what a run means: the same setup with or without a pool runs the same.
  sim::fiber_stacks* stack_pool = nullptr;
};

struct run_report {
  sim::run_outcome outcome;
  std::optional<sim::finding> found;
  std::optional<sim::divergence> diverged;
  std::size_t decision_count = 0;       // always, whatever was kept
  std::vector<sim::decision> decisions;  // empty under keep::verdict_only
  std::uint64_t decision_hash = 0;       // 0 under keep::verdict_only
  scenarios::probe_hits probes{};  // how often each code probe was hit in this run
  std::vector<sim::sim_event> events;
  std::vector<sim::actor_name> actors;
  sim::trace trace;
};

// The swarm fault profile the seed draws for this scenario.
sim::fault_profile faults_for(const scenarios::scenario_spec& spec, std::uint64_t seed);

// What run_once keeps beyond the outcome, the finding and the probes. The typed events, the
// actor table and the trace cost time on every run, so a search keeps them for findings only;
// copying and hashing the decisions cost ~2% of a page42 run, so a search that reads neither
// (explore) keeps only the verdict:
//   everything     decisions, hash, events, actors, trace
//   on_finding     decisions, hash, events, actors and trace of a run with a finding; else the verdict
//   outcome_only   decisions and hash, no events, actors or trace (shrink compares decisions)
//   verdict_only   neither decisions nor hash (decision_count still)
enum class keep : std::uint8_t { everything, on_finding, outcome_only, verdict_only };

run_report run_once(const run_setup& setup, sim::strategy& chooser, keep what = keep::everything);

// The trace of a finished world run under `setup`, as run_once records it.
sim::trace trace_of(const run_setup& setup, const sim::world& world);

// Runs one world like run_once and hands the finished world to `inspect` (exhaustive search
// reads its decisions and events) before it is destroyed.
using inspector = std::function<void(const sim::world&, const sim::run_outcome&)>;
void run_inspecting(const run_setup& setup, sim::strategy& chooser, const inspector& inspect);

// The catalogue at `path`, or the built-in one for builtin_catalogue_name (input_error with
// the catalogue's own one-line message).
std::vector<scenarios::scenario_spec> load_scenarios(const std::filesystem::path& path);
// The scenario called `name` (input_error naming the catalogue when absent).
scenarios::scenario_spec find_scenario(const std::vector<scenarios::scenario_spec>& all,
                                       const std::string& name, const std::filesystem::path& from);
// "safe" or a bug name B1..B15, H1..H3 (usage_error listing them otherwise).
core::variant parse_variant(const std::string& name);
// "all", "damage" or "rules" (usage_error otherwise), as --checkers takes it.
properties::checker_family parse_checkers(const std::string& name);

}  // namespace kvsim::tools
