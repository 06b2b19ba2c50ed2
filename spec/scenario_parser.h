#pragma once
// The scenario parser behind parse_scenario and load_catalogue (internal to scenarios/).
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "spec/scenario_spec.h"

namespace kvsim::scenarios::detail {

// `where` starts every error line; until the scenario's name is read, the scenario is called
// "scenarios[index]" (or "scenario (unnamed)" without an index).
scenario_spec parse_scenario_at(const nlohmann::json& scenario, const std::string& where,
                                std::optional<std::size_t> index);

// How errors name a scenario: "scenario 'page42'", "scenarios[3]".
std::string scenario_label(const std::string& name);
std::string scenario_label(std::optional<std::size_t> index);

}  // namespace kvsim::scenarios::detail
