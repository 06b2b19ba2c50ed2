#include "real_backend/scripts/real_outcome.h"

#include <algorithm>
#include <atomic>

namespace kvsim::real {

void finding_log::add(const std::string& line, bool timing_dependent) {
  const std::lock_guard lock(mutex_);
  const std::string invariant = line.substr(0, line.find(':'));
  for (const real_finding& seen : findings_) {
    if (seen.message == line) return;
  }
  std::uint64_t* counter = stamps_ != nullptr ? stamps_ : &own_stamps_;
  const std::uint64_t order = std::atomic_ref<std::uint64_t>(*counter).fetch_add(1) + 1;
  findings_.push_back({invariant, line, timing_dependent, order});
}

std::vector<real_finding> merge_findings(const std::vector<std::vector<real_finding>>& parts) {
  std::vector<real_finding> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const real_finding& a, const real_finding& b) { return a.order < b.order; });
  std::vector<real_finding> merged;
  for (const real_finding& f : all) {
    const bool seen = std::any_of(merged.begin(), merged.end(),
                                  [&](const real_finding& m) { return m.message == f.message; });
    if (!seen) merged.push_back(f);
  }
  return merged;
}

real_outcome processes_outcome(const std::string& scenario, const std::string& variant,
                               const std::string& backend, std::vector<std::string> notes,
                               const std::vector<std::vector<real_finding>>& findings,
                               const std::vector<std::vector<recorded_event>>& events) {
  real_outcome outcome;
  outcome.scenario = scenario;
  outcome.variant = variant;
  outcome.backend = backend;
  outcome.devices = 1;
  outcome.simulated_peers = false;
  outcome.notes = std::move(notes);
  outcome.findings = merge_findings(findings);
  outcome.events = merge_events(events);
  return outcome;
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
  const auto marked = [](const real_finding& f) {
    return f.message + (f.timing_dependent ? " [timing-dependent]" : "");
  };
  out << "finding: " << marked(outcome.findings.front()) << "\n";
  for (std::size_t i = 1; i < outcome.findings.size(); ++i) {
    out << "also: " << marked(outcome.findings[i]) << "\n";
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
                    {"message", outcome.findings.front().message},
                    {"timing_dependent", outcome.findings.front().timing_dependent}};
  }
  nlohmann::json also = nlohmann::json::array();
  for (std::size_t i = 1; i < outcome.findings.size(); ++i) {
    also.push_back({{"invariant", outcome.findings[i].invariant},
                    {"message", outcome.findings[i].message},
                    {"timing_dependent", outcome.findings[i].timing_dependent}});
  }
  j["also"] = also;
  j["notes"] = outcome.notes;
  return j;
}

}  // namespace kvsim::real
