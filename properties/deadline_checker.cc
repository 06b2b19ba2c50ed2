#include "properties/deadline_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds deadline_checker::subscriptions() const {
  return sim::event_kinds::of<sim::deadlines_checked, core::abort_armed, core::deadline_expired,
                              core::request_finished>();
}

std::optional<sim::finding> deadline_checker::observe(const sim::sim_event& e, std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* checked = std::get_if<sim::deadlines_checked>(&e.body)) {
    for (const auto& [request, abort] : waiting_) {
      if (request.first != checked->rank || abort.deadline_us > e.time_us) continue;
      std::vector<std::size_t> evidence{abort.armed.index, at.index};
      sort_evidence(evidence);
      return sim::finding{
          "I9",
          "I9: rank " + std::to_string(checked->rank) + " checked its deadlines at t=" +
              std::to_string(e.time_us) + "us (step " + std::to_string(at.step) +
              "), but the abort of " + core::to_string(request.second) + " armed at step " +
              std::to_string(abort.armed.step) + " with deadline t=" +
              std::to_string(abort.deadline_us) + "us still waits for its drain-ACKs",
          std::move(evidence),
          {}};
    }
    return std::nullopt;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  const core::event_body& body = decided->what.body;
  if (const auto* armed = std::get_if<core::abort_armed>(&body)) {
    if (armed->deadline_us) waiting_[{rank, armed->key}] = pending{*armed->deadline_us, at};
  } else if (const auto* expired = std::get_if<core::deadline_expired>(&body)) {
    waiting_.erase({rank, expired->key});
  } else if (const auto* finished = std::get_if<core::request_finished>(&body)) {
    waiting_.erase({rank, finished->key});
  }
  return std::nullopt;
}

}  // namespace kvsim::properties
