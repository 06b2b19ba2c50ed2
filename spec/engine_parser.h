#pragma once
// Reading a scenario's `engine` block (scenarios/SCHEMA.md, "Engine"), internal to the
// scenario parser: what a decode rank's engine does with a request once its KV arrived
// (forward passes, store jobs, preemption).
#include <nlohmann/json.hpp>

#include "spec/json_reader.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios::detail {

engine_spec parse_engine(const json_reader& in, const nlohmann::json& value);

// Once every field is read: an engine runs requests in a transfer world, and preemption
// needs a rank that serves several at once (someone to make room for).
void check_engine(const json_reader& in, const scenario_spec& spec);

// The block as the writer writes it; empty when `engine` is the default (nothing written).
nlohmann::json engine_json(const engine_spec& engine);

}  // namespace kvsim::scenarios::detail
