#pragma once
// Builds and runs a simulated world from a catalogue scenario of kind `transfer`: prefill and
// decode ranks running the production core (prefill_sender, decode_receiver) with the chosen
// variant, on simulated memory, transfers and network, with the scenario's faults. Checkers
// are attached by the caller (properties::checker_set), so this layer stays below properties/.
#include <cstdint>
#include <memory>

#include "core/variant.h"
#include "scenarios/scenario_spec.h"
#include "scenarios/scenario_world.h"
#include "sim/fault_profile.h"
#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

// One event-loop iteration of a scheduler (and of prefill's bootstrap thread) takes this much
// virtual time. The bootstrap thread polls until the last request is served, a scheduling step
// per poll, so a run of N steps reaches at most N x this many microseconds: the catalogue
// refuses a pinned time (request_pin) past that.
inline constexpr std::uint64_t transfer_poll_interval_us = 5;

class transfer_world final : public scenario_world {
 public:
  // Built through make_scenario_world (which draws the fault profile from a seed).
  transfer_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                 const sim::fault_profile& faults, sim::fiber_stacks* stack_pool = nullptr);
  // Reads `spec` as it runs: the caller keeps it alive (make_scenario_world).
  transfer_world(scenario_spec&& spec, core::variant v, sim::strategy& chooser,
                 const sim::fault_profile& faults, sim::fiber_stacks* stack_pool = nullptr) = delete;
  ~transfer_world();

  sim::world& world() override;

 private:
  struct parts;
  std::unique_ptr<parts> parts_;
};

}  // namespace kvsim::scenarios
