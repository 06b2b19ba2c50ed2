#pragma once
// Builds and runs a simulated world from a catalogue scenario of kind `transfer`: prefill and
// decode ranks running the production core (prefill_sender, decode_receiver) with the chosen
// variant, on simulated memory, transfers and network, with the scenario's faults. Checkers
// are attached by the caller (properties::checker_set), so this layer stays below properties/.
#include <cstdint>
#include <memory>

#include "core/variant.h"
#include "spec/scenario_spec.h"
#include "scenarios/scenario_world.h"
#include "sim/fault_profile.h"
#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

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
