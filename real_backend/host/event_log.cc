#include "real_backend/host/event_log.h"

namespace kvsim::real {

void event_log::emit(const core::event& e) {
  const std::lock_guard lock(mutex_);
  events_.push_back(e);
  for (const observer& o : observers_) o(e);
}

void event_log::observe(observer o) {
  const std::lock_guard lock(mutex_);
  observers_.push_back(std::move(o));
}

std::vector<core::event> event_log::events() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

}  // namespace kvsim::real
