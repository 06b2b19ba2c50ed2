#include "sim/run_trace.h"

#include <utility>

namespace kvsim::sim {

const char* kvsim_version() { return KVSIM_VERSION; }

trace capture_trace(const world& w, nlohmann::json scenario, std::string variant,
                    std::string strategy, std::uint64_t seed) {
  trace t;
  t.kvsim_version = kvsim_version();
  t.scenario = std::move(scenario);
  t.variant = std::move(variant);
  t.strategy = std::move(strategy);
  t.seed = seed;
  t.faults = w.faults();
  t.actors = w.actor_names();
  t.decisions = w.decisions();
  t.events.reserve(w.events().size());
  for (const sim_event& e : w.events()) t.events.push_back(describe(e, w.actor_names()));
  t.found = w.found();
  t.steps = w.steps();
  return t;
}

}  // namespace kvsim::sim
