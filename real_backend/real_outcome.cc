#include "real_backend/real_outcome.h"

#include <algorithm>

namespace kvsim::real {

void finding_log::add(const std::string& line) {
  const std::lock_guard lock(mutex_);
  const std::string invariant = line.substr(0, line.find(':'));
  const real_finding f{invariant, line};
  if (std::find(findings_.begin(), findings_.end(), f) == findings_.end()) findings_.push_back(f);
}

std::vector<real_finding> finding_log::findings() const {
  const std::lock_guard lock(mutex_);
  return findings_;
}

bool finding_log::empty() const {
  const std::lock_guard lock(mutex_);
  return findings_.empty();
}

void print_text(const real_outcome& outcome, std::ostream& out) {
  out << "kvsim real: scenario " << outcome.scenario << ", variant " << outcome.variant
      << ", backend " << outcome.backend << ", " << outcome.devices
      << (outcome.devices == 1 ? " device" : " devices")
      << (outcome.simulated_peers ? " (peers simulated)" : "") << "\n";
  for (const std::string& note : outcome.notes) out << "  " << note << "\n";
  if (outcome.findings.empty()) {
    out << "no finding\n";
    return;
  }
  out << "finding: " << outcome.findings.front().message << "\n";
  for (std::size_t i = 1; i < outcome.findings.size(); ++i) {
    out << "also: " << outcome.findings[i].message << "\n";
  }
}

nlohmann::json to_json(const real_outcome& outcome) {
  nlohmann::json j;
  j["scenario"] = outcome.scenario;
  j["variant"] = outcome.variant;
  j["backend"] = outcome.backend;
  j["devices"] = outcome.devices;
  j["simulated_peers"] = outcome.simulated_peers;
  if (outcome.findings.empty()) {
    j["finding"] = nullptr;
  } else {
    j["finding"] = {{"invariant", outcome.findings.front().invariant},
                    {"message", outcome.findings.front().message}};
  }
  nlohmann::json also = nlohmann::json::array();
  for (std::size_t i = 1; i < outcome.findings.size(); ++i) {
    also.push_back(
        {{"invariant", outcome.findings[i].invariant}, {"message", outcome.findings[i].message}});
  }
  j["also"] = also;
  j["notes"] = outcome.notes;
  return j;
}

}  // namespace kvsim::real
