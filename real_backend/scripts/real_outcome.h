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

#include "real_backend/event_recorder.h"

namespace kvsim::real {

struct real_finding {
  std::string invariant;  // "I1".."I9"
  std::string message;    // one line, starting "I<n>: "
  // Found under a wall-clock bound rather than forced by the script's gates and handshakes
  // (I9: a request unfinished after `liveness`): another machine's timing may differ.
  bool timing_dependent = false;
  std::uint64_t order = 0;  // when it was found, on the run's one counter (merging processes)

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
  // The core's events in the order logged (kvsim real --trace); of rank processes (--ranks
  // 2), each process's log merged by the steady clock they share.
  std::vector<recorded_event> events;
};

// Thread-safe: rank threads and observers add findings while a run goes on.
class finding_log {
 public:
  // Findings are stamped from `*shared` when given (a word every process of the run maps:
  // script_board.h), so that the findings of separate processes merge in the order found.
  void stamp_from(std::uint64_t* shared) { stamps_ = shared; }
  // `line` starts with the invariant ("I5: ..."); a line seen before is not added again.
  void add(const std::string& line, bool timing_dependent = false);
  std::vector<real_finding> findings() const;
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::vector<real_finding> findings_;
  std::uint64_t own_stamps_ = 0;
  std::uint64_t* stamps_ = nullptr;
};

// The findings of several processes as one run's, in the order they were found, each line
// once.
std::vector<real_finding> merge_findings(const std::vector<std::vector<real_finding>>& parts);

// The outcome of a run whose ranks were processes of their own (`--ranks N`, `--launched`):
// one device (the backend's memory that every process maps), no peer simulated; the findings
// of every process merged in the order found, their events merged by their stamps. The one
// place where such a run's report is put together.
real_outcome processes_outcome(const std::string& scenario, const std::string& variant,
                               const std::string& backend, std::vector<std::string> notes,
                               const std::vector<std::vector<real_finding>>& findings,
                               const std::vector<std::vector<recorded_event>>& events);

// The run as text: a header line, then "finding: I..." and "also: I..." lines, or
// "no finding".
void print_text(const real_outcome& outcome, std::ostream& out);
// {"scenario","variant","backend","devices","simulated_peers","finding":null|{"invariant",
// "message","timing_dependent"},"also":[...],"notes":[...]}
nlohmann::json to_json(const real_outcome& outcome);

}  // namespace kvsim::real
