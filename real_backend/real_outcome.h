#pragma once
// What a real run found, in the simulator's finding format: an invariant of DOMAIN.md
// ("I1".."I9") and one line that starts with it. Unlike the simulator, a real run does not
// stop at its first finding (the device cannot be rewound), so it keeps every finding in the
// order found; the first is the run's finding, the others back it up.
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace kvsim::real {

struct real_finding {
  std::string invariant;  // "I1".."I9"
  std::string message;    // one line, starting "I<n>: "

  friend bool operator==(const real_finding&, const real_finding&) = default;
};

struct real_outcome {
  std::string scenario;
  std::string variant;
  std::string backend = "cuda";
  std::uint32_t devices = 0;     // devices the run used
  bool simulated_peers = false;  // ranks shared a device (peers simulated by host threads)
  std::vector<real_finding> findings;
  std::vector<std::string> notes;  // where each rank ran, what the script did
};

// Thread-safe: rank threads and observers add findings while a run goes on.
class finding_log {
 public:
  // `line` starts with the invariant ("I5: ..."); a line seen before is not added again.
  void add(const std::string& line);
  std::vector<real_finding> findings() const;
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::vector<real_finding> findings_;
};

// The run as text: a header line, then "finding: I..." and "also: I..." lines, or
// "no finding".
void print_text(const real_outcome& outcome, std::ostream& out);
// {"scenario","variant","backend","devices","simulated_peers","finding":null|{"invariant",
// "message"},"also":[...],"notes":[...]}
nlohmann::json to_json(const real_outcome& outcome);

}  // namespace kvsim::real
