#include "real_backend/event_recorder.h"

namespace kvsim::real {

void event_recorder::attach(event_log& log) {
  log.observe([this](const core::event& e) {
    const auto since = std::chrono::steady_clock::now() - start_;
    const auto at_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(since).count());
    // The log calls its observers one at a time; the lock is for events() on another thread.
    const std::lock_guard lock(mutex_);
    events_.push_back({at_us, e});
  });
}

std::vector<recorded_event> event_recorder::events() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

}  // namespace kvsim::real
