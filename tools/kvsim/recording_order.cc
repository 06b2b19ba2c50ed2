#include "tools/kvsim/recording_order.h"

#include <algorithm>
#include <sstream>
#include <variant>

#include "spec/trace_format.h"

namespace kvsim::tools {

std::string core_decision_name(std::string_view described) {
  std::istringstream words{std::string(described)};
  std::vector<std::string> w;
  for (std::string word; words >> word;) w.push_back(word);
  // "rank R kind", then the request where a word "room" names it ("lease=3 room 7/gen 0").
  std::string name;
  for (std::size_t i = 0; i < std::min<std::size_t>(w.size(), 3); ++i) {
    name += (i == 0 ? "" : " ") + w[i];
  }
  for (std::size_t i = 3; i + 2 < w.size(); ++i) {
    if (w[i] == "room") return name + " room " + w[i + 1] + " " + w[i + 2];
  }
  return name;
}

std::vector<std::string> core_order(const std::vector<std::string>& event_lines) {
  const std::string marker =
      " " + std::string(spec::to_string(spec::event_kind::core_decided)) + " ";
  std::vector<std::string> order;
  for (const std::string& line : event_lines) {
    const std::size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    order.push_back(core_decision_name(std::string_view(line).substr(at + marker.size())));
  }
  return order;
}

std::vector<std::string> core_order(const std::vector<sim::sim_event>& events) {
  std::vector<std::string> order;
  for (const sim::sim_event& e : events) {
    if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
      order.push_back(core_decision_name(core::describe(decided->what)));
    }
  }
  return order;
}

order_fit fit(const std::vector<std::string>& recorded, const std::vector<std::string>& run) {
  // Longest common subsequence, one row at a time: a few hundred decisions a side.
  std::vector<std::size_t> previous(run.size() + 1, 0), current(run.size() + 1, 0);
  for (const std::string& r : recorded) {
    for (std::size_t j = 0; j < run.size(); ++j) {
      current[j + 1] = r == run[j] ? previous[j] + 1 : std::max(previous[j + 1], current[j]);
    }
    std::swap(previous, current);
  }
  const std::size_t followed = previous[run.size()];
  std::size_t agreed = 0;
  while (agreed < run.size() && agreed < recorded.size() && run[agreed] == recorded[agreed]) ++agreed;
  return {recorded.size(), agreed, followed, run.size() - followed};
}

}  // namespace kvsim::tools
