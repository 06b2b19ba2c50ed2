#pragma once
// Any catalogue scenario as a runnable simulated world, whatever its kind: what the search,
// the CLI and the tests hold. Built from the scenario, a variant of the core, the strategy
// that takes the run's decisions, and the seed (which also draws the swarm fault profile
// among the faults the scenario allows).
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "core/variant.h"
#include "spec/scenario_spec.h"
#include "sim/fault_profile.h"
#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class scenario_world {
 public:
  virtual ~scenario_world() = default;
  virtual sim::world& world() = 0;
  sim::run_outcome run() { return world().run(); }
};

// The world reads `spec` as it runs and does not copy it (a search builds a world per seed
// from one spec): the caller keeps it alive until the world is destroyed, so a temporary is
// refused at compile time. `stack_pool`: where the actors' fiber stacks come from (a search
// passes one pool to every world it builds, sim::world_config::stack_pool); null: the world's own.
std::unique_ptr<scenario_world> make_scenario_world(const scenario_spec& spec, core::variant v,
                                                    sim::strategy& chooser, std::uint64_t seed,
                                                    sim::fiber_stacks* stack_pool = nullptr);
// With an explicit fault profile instead of the seed's draw (replaying or shrinking a trace).
std::unique_ptr<scenario_world> make_scenario_world(const scenario_spec& spec, core::variant v,
                                                    sim::strategy& chooser,
                                                    const sim::fault_profile& faults,
                                                    sim::fiber_stacks* stack_pool = nullptr);
std::unique_ptr<scenario_world> make_scenario_world(scenario_spec&& spec, core::variant v,
                                                    sim::strategy& chooser,
                                                    std::uint64_t seed,
                                                    sim::fiber_stacks* stack_pool = nullptr) = delete;
std::unique_ptr<scenario_world> make_scenario_world(scenario_spec&& spec, core::variant v,
                                                    sim::strategy& chooser,
                                                    const sim::fault_profile& faults,
                                                    sim::fiber_stacks* stack_pool = nullptr) = delete;

// The fault kinds a scenario allows (bit i = sim::fault_kind i); swarm draws among them.
std::uint32_t allowed_faults(const scenario_spec& spec);

// The profile of an exhaustive search where faults are choices (sim/search/dpor.h): every kind the
// scenario allows is on (the rate only says "possible"; the search decides each
// opportunity), and faults never stop (with at most K of them, I9 judges every request from
// its start).
sim::fault_profile faults_as_choices(const scenario_spec& spec);

// A core variant by the name the command line, the catalogue and traces use: "safe", a bug
// ("B1".."B12", "H1".."H3") or bugs joined with '+', and "canary", the canary scenario's
// deliberately broken core (decode frees its pages at abort: B1's release, so it runs as
// and is recorded as "B1"). Empty for any other name.
std::optional<core::variant> variant_from_name(std::string_view name);

// The variant the scenario expects to break: its named bug, or for the canary the
// deliberately broken core (decode frees its pages at abort, B1's release).
core::variant breaking_variant(const scenario_spec& spec);
// The variant one of its expectations (expect or an entry of expect.also) names.
core::variant breaking_variant(const expectation_spec& expect);

}  // namespace kvsim::scenarios
