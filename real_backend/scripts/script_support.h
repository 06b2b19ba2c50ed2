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

// Empty when `spec` serves its requests one after another from the start, each rank with
// topology.pages_per_rank pages, as every real script serves them; otherwise why not, as one
// clause naming the field that asks for more (topology.concurrency above 1,
// topology.pages_by_rank, a request's arrive_at_us, given or added by a load block), e.g.
// "serves requests at once (topology.concurrency 64); the real backend serves them one after
// another". `kvsim real` refuses such a scenario with this clause before anything starts
// (real_command.cc), and unscripted_reason gives it too, so --list never names one.
std::optional<std::string> served_at_once_reason(const scenarios::scenario_spec& spec);

// Empty when the real backend scripts `spec`; otherwise why not, as one clause.
std::optional<std::string> unscripted_reason(const scenarios::scenario_spec& spec);

// "safe", a bug name ("B1".."H3"), or "canary" (the deliberately broken core of the canary
// scenario: decode frees its pages at abort, B1's release). Empty when unknown.
std::optional<core::variant> real_variant(std::string_view name);

}  // namespace kvsim::real
