#pragma once
// Reading requests[i].pin (scenarios/SCHEMA.md), internal to the scenario parser: the pin's
// own fields and their rules against its request and the topology, and the rules that need
// the whole scenario (its kind, heal_bound_us, the other requests' pins).
#include <string>

#include <nlohmann/json.hpp>

#include "spec/json_reader.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios::detail {

// `value` is the pin at `path` ("requests[1].pin") of `request`, whose other fields are read.
request_pin parse_pin(const json_reader& in, const nlohmann::json& value, const std::string& path,
                      const request_spec& request, const topology_spec& topology);

// Once every field is read: pins belong to transfer scenarios, a pinned abort comes within
// the I9 bound of its submission, and pinned submissions follow the requests' order.
void check_pins(const json_reader& in, const scenario_spec& spec);

}  // namespace kvsim::scenarios::detail
