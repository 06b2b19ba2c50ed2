#include "sim/timeline_clock.h"

#include <algorithm>

namespace kvsim::sim {

timeline_clock place_on_virtual_time(const std::vector<sim_event>& events, std::size_t trailing) {
  constexpr std::uint64_t ns_per_us = 1000;
  // The log's time never goes back; should a hand-made one, its event stays at the later time.
  std::vector<std::uint64_t> us(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    us[i] = i == 0 ? events[i].time_us : std::max(events[i].time_us, us[i - 1]);
  }
  const std::uint64_t last_us = us.empty() ? 0 : us.back();
  const std::size_t total = events.size() + trailing;
  timeline_clock clock;
  clock.events.resize(events.size());
  clock.trailing.resize(trailing);
  const auto slot_at = [&](std::size_t i) -> timeline_slot& {
    return i < events.size() ? clock.events[i] : clock.trailing[i - events.size()];
  };
  const auto us_at = [&](std::size_t i) { return i < events.size() ? us[i] : last_us; };
  for (std::size_t first = 0; first < total;) {
    std::size_t end = first;
    while (end < total && us_at(end) == us_at(first)) ++end;
    const std::uint64_t n = end - first;
    const std::uint64_t base = us_at(first) * ns_per_us;
    for (std::size_t i = first; i < end; ++i) {
      const std::uint64_t k = i - first;
      const std::uint64_t start = k * ns_per_us / n;
      const std::uint64_t next = (k + 1) * ns_per_us / n;
      slot_at(i) = {base + start, next - start};
    }
    first = end;
  }
  return clock;
}

}  // namespace kvsim::sim
