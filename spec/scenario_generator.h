#pragma once
// Scenario swarm: a fresh scenario drawn from the catalogue schema for every seed, so a search
// is not limited to the scenarios somebody wrote (swarm testing, Groce et al., ISSTA 2012, one
// level up from the fault profile). Topology, requests with room reuse, aborts at every phase
// from either side and from a subset of decode ranks, chunks and sibling futures, gates,
// stalls, failures, unconfirmed timeouts, message delay/duplication/loss, deadlines, HiCache
// states (drawn as scenario_draw.h says). The same seed gives the same scenario in every
// build; the draw has its own stream, so it never shifts the run's decisions.
#include <cstdint>

#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

// The name every generated scenario carries (traces keep the scenario inline, so a finding
// replays and shrinks like any other).
inline constexpr const char* generated_scenario_name = "generated";

scenario_spec generate_scenario(std::uint64_t seed);

}  // namespace kvsim::scenarios
