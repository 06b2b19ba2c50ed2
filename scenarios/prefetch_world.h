#pragma once
// Builds and runs a simulated world from a catalogue scenario of kind `prefetch`: the ranks
// of one attention group, each running the production prefetch_abort_coordinator with the
// chosen variant over a simulated collective, simulated host memory (sim/kv_memory.h, one
// pool per rank, pages handed out by sim/host_page_pool.h) and simulated L3 storage whose
// per-rank I/O actor writes the request's bytes into its host pages one page per step
// (sim/sim_storage.h).
//
// Each rank's scheduler begins the requests in order and ends them in order, but interleaves
// the two as the search chooses, so several prefetches of a rank may be in flight at once
// and a later request may take host pages an earlier one has just freed. A request begins in
// the state the scenario gives the rank (missing: no entry; pending: registered, no I/O;
// active: host pages taken and the storage read started). It ends when the search chooses:
// after a drawn number of its pages have landed (0 .. all), so the abort or completion may
// land before, during or after the read, at each rank's own moment. An aborted request runs
// the group's abort cleanup on every rank (in request order, so the collectives match); one
// that is not aborted completes locally, and its bytes are then verified (I7). Checkers are
// attached by the caller.
#include <cstdint>
#include <map>
#include <memory>

#include "core/variant.h"
#include "spec/scenario_spec.h"
#include "scenarios/scenario_world.h"
#include "sim/fault_profile.h"
#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class prefetch_world final : public scenario_world {
 public:
  // Built through make_scenario_world (which draws the fault profile from a seed).
  prefetch_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                 const sim::fault_profile& faults, sim::fiber_stacks* stack_pool = nullptr);
  // Reads `spec` as it runs: the caller keeps it alive (make_scenario_world).
  prefetch_world(scenario_spec&& spec, core::variant v, sim::strategy& chooser,
                 const sim::fault_profile& faults, sim::fiber_stacks* stack_pool = nullptr) = delete;
  ~prefetch_world();

  sim::world& world() override;

 private:
  struct parts;
  std::unique_ptr<parts> parts_;
};

// What a scripted test asserts after a run: per rank, how often it entered the abort barrier
// and how often it freed host pages (from the world's event log).
struct prefetch_tally {
  std::map<core::rank_id, int> barrier_entries;
  std::map<core::rank_id, int> host_page_frees;
};
prefetch_tally tally_prefetch(const sim::world& w);

}  // namespace kvsim::scenarios
