#pragma once
// Builds and runs a simulated world from a catalogue scenario of kind `prefetch`: the ranks
// of one attention group, each running the production prefetch_abort_coordinator with the
// chosen variant over a simulated collective and simulated L3 storage. Each rank starts each
// request's prefetch in the state the scenario gives it (missing: no entry; pending:
// registered, no I/O; active: storage read in flight), then, for an aborted request, every
// rank runs the abort cleanup (the seed's asymmetric HiCache cases). Checkers are attached by
// the caller.
#include <cstdint>
#include <map>
#include <memory>

#include "core/variant.h"
#include "scenarios/scenario_spec.h"
#include "scenarios/scenario_world.h"
#include "sim/fault_profile.h"
#include "sim/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class prefetch_world final : public scenario_world {
 public:
  // Built through make_scenario_world (which draws the fault profile from a seed).
  prefetch_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                 const sim::fault_profile& faults);
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
