#pragma once
// Which catalogue scenarios the real backend runs, and how a variant name is read there. A
// real run is a fixed script (no search: the device decides nothing for us), so it covers
// the scenarios whose shape a script can force: gated transfers aborted by decode while the
// gate holds them (page42, canary), and every HiCache prefetch case. The others need the
// simulator's fault injection and search.
#include <optional>
#include <string>
#include <string_view>

#include "core/variant.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// Empty when the real backend scripts `spec`; otherwise why not, as one clause.
std::optional<std::string> unscripted_reason(const scenarios::scenario_spec& spec);

// "safe", a bug name ("B1".."H3"), or "canary" (the deliberately broken core of the canary
// scenario: decode frees its pages at abort, B1's release). Empty when unknown.
std::optional<core::variant> real_variant(std::string_view name);

}  // namespace kvsim::real
