#pragma once
// Captures a finished world's run as a trace (sim/trace.h): the header the caller knows
// (scenario, variant, strategy, seed), and what the world recorded (actors, decisions,
// events, finding, steps, fault profile).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/trace.h"
#include "sim/world.h"

namespace kvsim::sim {

// The version written into every trace header.
const char* kvsim_version();

trace capture_trace(const world& w, nlohmann::json scenario, std::string variant,
                    std::string strategy, std::uint64_t seed);

}  // namespace kvsim::sim
