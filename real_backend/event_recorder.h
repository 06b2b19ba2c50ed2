#pragma once
// The run's event log as `kvsim real --trace` writes it: every core event in the order the
// log took it (event_log::emit is serialised, so that order is the one the ranks' decisions
// were made in), stamped with steady host time since the recorder was made. Attached as an
// observer of the log before the run starts; read once the run is over.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/events.h"
#include "real_backend/event_log.h"

namespace kvsim::real {

struct recorded_event {
  std::uint64_t at_us = 0;  // steady host time since the recorder was made
  core::event what;
};

class event_recorder {
 public:
  void attach(event_log& log);
  std::vector<recorded_event> events() const;

 private:
  mutable std::mutex mutex_;
  std::vector<recorded_event> events_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace kvsim::real
