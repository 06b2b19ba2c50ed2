#include "tools/kvsim/run_json.h"

#include <cstdio>

namespace kvsim::tools {

std::string hex_hash(std::uint64_t hash) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(hash));
  return text;
}

nlohmann::json finding_json(const std::optional<sim::finding>& found) {
  if (!found) return nullptr;
  return {{"invariant", found->invariant}, {"message", found->message}};
}

nlohmann::json run_json(const run_setup& setup, const run_report& report) {
  return {{"scenario", setup.spec.name},
          {"variant", setup.variant.name()},
          {"strategy", setup.strategy_name},
          {"seed", setup.seed},
          {"faults", setup.faults.describe()},
          {"steps", report.outcome.steps},
          {"decisions", report.decisions.size()},
          {"decision_hash", hex_hash(report.decision_hash)},
          {"time_us", report.outcome.time_us},
          {"finding", finding_json(report.found)}};
}

}  // namespace kvsim::tools
