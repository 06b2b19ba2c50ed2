#include "real_backend/event_recorder.h"

#include <algorithm>
#include <chrono>

#include "core/events.h"

namespace kvsim::real {

void event_recorder::attach(event_log& log) {
  log.observe([this](const core::event& e) {
    const auto at = std::chrono::steady_clock::now().time_since_epoch();
    recorded_event r{
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(at).count()),
        e.rank, core::describe(e)};
    // The log calls its observers one at a time; the lock is for events() on another thread.
    const std::lock_guard lock(mutex_);
    events_.push_back(std::move(r));
  });
}

std::vector<recorded_event> event_recorder::events() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

std::vector<recorded_event> merge_events(const std::vector<std::vector<recorded_event>>& parts) {
  std::vector<recorded_event> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  std::stable_sort(all.begin(), all.end(), [](const recorded_event& a, const recorded_event& b) {
    return a.at_ns < b.at_ns;
  });
  return all;
}

}  // namespace kvsim::real
