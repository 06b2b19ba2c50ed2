#pragma once
// Builds and runs a simulated world from a catalogue scenario of kind `transfer`: prefill and
// decode ranks running the production core (prefill_sender, decode_receiver) with the chosen
// variant, on simulated memory, transfers and network, with the scenario's faults. Checkers
// are attached by the caller (properties::checker_set), so this layer stays below properties/.
#include <cstdint>
#include <memory>

#include "core/variant.h"
#include "scenarios/scenario_spec.h"
#include "sim/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class transfer_world {
 public:
  transfer_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                 std::uint64_t seed);
  ~transfer_world();

  sim::world& world();
  sim::run_outcome run();

 private:
  struct parts;
  std::unique_ptr<parts> parts_;
};

// The fault kinds a scenario allows (swarm draws among them per seed).
std::uint32_t allowed_faults(const scenario_spec& spec);

}  // namespace kvsim::scenarios
