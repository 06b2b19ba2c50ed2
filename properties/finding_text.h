#pragma once
// The wording the checkers share, so that every finding reads the same way: lists joined as a
// sentence, ranks and steps named with their plural, evidence sorted and unique.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"

namespace kvsim::properties {

// Joins parts as "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& parts);
// "rank 2", "ranks 0 and 2" (in the order given).
std::string ranks_text(const std::vector<core::rank_id>& ranks);
// "step 3", "steps 3 and 8": ascending, each step once.
std::string steps_text(std::vector<std::uint64_t> steps);
// Event-log indices in log order, each once: how every finding lists its evidence.
void sort_evidence(std::vector<std::size_t>& evidence);

}  // namespace kvsim::properties
