#pragma once
// An event sink that keeps everything, for tests that assert on what the core decided.
#include <cstddef>
#include <optional>
#include <variant>
#include <vector>

#include "core/events.h"
#include "core/ports.h"

namespace kvsim::testing {

class recording_sink : public core::event_sink {
 public:
  void emit(const core::event& e) override { events_.push_back(e); }

  const std::vector<core::event>& events() const { return events_; }
  std::size_t size() const { return events_.size(); }
  void clear() { events_.clear(); }

  template <class T>
  std::size_t count() const {
    std::size_t n = 0;
    for (const auto& e : events_) n += std::holds_alternative<T>(e.body) ? 1 : 0;
    return n;
  }

  template <class T>
  std::optional<T> last() const {
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (const T* found = std::get_if<T>(&it->body)) return *found;
    }
    return std::nullopt;
  }

 private:
  std::vector<core::event> events_;
};

}  // namespace kvsim::testing
