#pragma once
// The checkers hook: after every step the world hands each new event to every registered
// checker, in order; at quiescence (every actor returned) it asks them once more. A checker
// that returns a finding ends the run. The checkers themselves live in properties/.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/sim_events.h"

namespace kvsim::sim {

struct finding {
  std::string invariant;  // "I1".."I9" of DOMAIN.md, or "deadlock", "livelock", "crash"
  std::string message;    // one line that names pages, requests, ranks and steps
  std::vector<std::size_t> evidence;  // indices into the run's event log
  std::vector<std::string> details;   // further lines, e.g. the wait-for graph

  friend bool operator==(const finding&, const finding&) = default;
};

class checker {
 public:
  virtual ~checker() = default;
  virtual const char* name() const = 0;
  // Sees every event exactly once, in order; `index` is its position in the event log.
  virtual std::optional<finding> observe(const sim_event& e, std::size_t index) = 0;
  // Every actor returned: what must hold of the final state.
  virtual std::optional<finding> at_quiescence() { return std::nullopt; }
  // The run hit its step limit at virtual time `now_us`: a finding this checker can make from
  // the time alone (I9: a request past its due time), which then names the run's finding
  // instead of a bare livelock (the world adds its livelock evidence to the details).
  virtual std::optional<finding> at_step_limit(std::uint64_t /*step*/, std::uint64_t /*now_us*/) {
    return std::nullopt;
  }
  // The run stops without quiescence (deadlock, step limit): lines naming what this checker
  // still waits to see (I9: the requests not finished), evidence for the world's finding.
  virtual std::vector<std::string> still_open() const { return {}; }
};

}  // namespace kvsim::sim
