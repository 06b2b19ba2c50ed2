#pragma once
// The JSON object of one run, shared by `run --json` and `replay --json`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/checker.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {

// "0x" and 16 hex digits: a 64-bit hash as a JSON string, since JSON numbers lose bits
// above 2^53 in most readers.
std::string hex_hash(std::uint64_t hash);

nlohmann::json finding_json(const std::optional<sim::finding>& found);

// {scenario, variant, strategy, seed, faults, steps, decisions, decision_hash, time_us,
//  finding: null | {invariant, message}}
nlohmann::json run_json(const run_setup& setup, const run_report& report);

}  // namespace kvsim::tools
