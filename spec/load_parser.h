#pragma once
// Reading a scenario's `load` block and the topology fields of a world that serves many
// requests at once (scenarios/SCHEMA.md, "Load"), internal to the scenario parser. A load is
// a stream of similar requests arriving one after another, as a benchmark client sends them:
// it is expanded into ordinary requests, appended after the listed ones, so everything that
// runs a scenario (the worlds, the writer, traces) sees requests only.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/json_reader.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios::detail {

// `value` is the load block; `listed` the scenario's own requests (rooms of the load start
// after the largest of theirs unless `first_room` says otherwise).
std::vector<request_spec> parse_load(const json_reader& in, const nlohmann::json& value,
                                     const std::vector<request_spec>& listed,
                                     const topology_spec& topology);

// topology.pages_by_rank: one pool per rank of a transfer world, in rank order.
std::vector<std::uint32_t> parse_pages_by_rank(const json_reader& in, const nlohmann::json& value,
                                               const std::string& path, std::uint32_t ranks);

// Once every field is read: a world of many requests at once is a transfer world, and the
// arrival times are ones a run can reach.
void check_load(const json_reader& in, const scenario_spec& spec);

}  // namespace kvsim::scenarios::detail
