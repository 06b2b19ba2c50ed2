#pragma once
// The run's event log as `kvsim real --trace` writes it: every core event in the order the
// log took it (event_log::emit is serialised, so that order is the one the ranks' decisions
// were made in), stamped with the steady clock. Attached as an observer of the log before
// the run starts; read once the run is over. The stamps are CLOCK_MONOTONIC readings, one
// clock for every process of the machine, so the logs of rank processes (--ranks 2) merge
// into the run's order.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/ids.h"
#include "real_backend/host/event_log.h"

namespace kvsim::real {

struct recorded_event {
  std::uint64_t at_ns = 0;  // steady clock (std::chrono::steady_clock's epoch)
  core::rank_id rank = 0;
  std::string what;  // core::describe of the event
  friend bool operator==(const recorded_event&, const recorded_event&) = default;
};

class event_recorder {
 public:
  void attach(event_log& log);
  std::vector<recorded_event> events() const;

 private:
  mutable std::mutex mutex_;
  std::vector<recorded_event> events_;
};

// The logs of several processes as one, by their stamps (a tie keeps the order given).
std::vector<recorded_event> merge_events(const std::vector<std::vector<recorded_event>>& parts);

}  // namespace kvsim::real
