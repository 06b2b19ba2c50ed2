#pragma once
// One run of a catalogue scenario as the exhaustive search (sim/search/dpor.h) wants it:
// shared by the tests that search catalogue scenarios with dpor.
#include <functional>
#include <memory>

#include "properties/all_checkers.h"
#include "scenarios/scenario_world.h"
#include "sim/search/dpor.h"

namespace kvsim::testing {

// A fresh world per run whose faults are the search's choices, every checker attached, one
// pool of fiber stacks for every run of the search (as kvsim's searches have). `spec` must
// outlive the search.
inline sim::dpor_run_fn dpor_scenario_run(const scenarios::scenario_spec& spec, core::variant v) {
  return [&spec, v, stacks = std::make_shared<sim::fiber_stacks>()](
             sim::strategy& chooser, const std::function<void(const sim::world&)>& inspect) {
    const auto w = scenarios::make_scenario_world(spec, v, chooser, scenarios::faults_as_choices(spec),
                                                  stacks.get());
    properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
    checkers.attach(w->world());
    w->run();
    inspect(w->world());
  };
}

}  // namespace kvsim::testing
