#include "properties/finding_text.h"

#include <algorithm>

namespace kvsim::properties {

std::string join_and(const std::vector<std::string>& parts) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) text += i + 1 == parts.size() ? " and " : ", ";
    text += parts[i];
  }
  return text;
}

std::string ranks_text(const std::vector<core::rank_id>& ranks) {
  std::vector<std::string> parts;
  for (core::rank_id r : ranks) parts.push_back(std::to_string(r));
  return (ranks.size() == 1 ? "rank " : "ranks ") + join_and(parts);
}

std::string steps_text(std::vector<std::uint64_t> steps) {
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::vector<std::string> parts;
  for (std::uint64_t s : steps) parts.push_back(std::to_string(s));
  return (steps.size() == 1 ? "step " : "steps ") + join_and(parts);
}

void sort_evidence(std::vector<std::size_t>& evidence) {
  std::sort(evidence.begin(), evidence.end());
  evidence.erase(std::unique(evidence.begin(), evidence.end()), evidence.end());
}

}  // namespace kvsim::properties
