#include "properties/closed_room_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "core/kv_status.h"
#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds closed_room_checker::subscriptions() const {
  return sim::event_kinds::of<sim::failure_injected, core::room_closed, core::chunk_admitted,
                              core::status_changed, core::request_pages_released>();
}

std::optional<sim::finding> closed_room_checker::observe(const sim::sim_event& e,
                                                         std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* failure = std::get_if<sim::failure_injected>(&e.body)) {
    injected_.try_emplace(failure->key, failure->rank, at);
    return std::nullopt;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  const core::event_body& body = decided->what.body;

  if (const auto* closed = std::get_if<core::room_closed>(&body)) {
    // A close that leaves a before-open tombstone came before the room opened here.
    closed_.try_emplace({rank, closed->key},
                        closing{at, closed->tombstone &&
                                        closed->table == core::tombstone_table::before_open});
  } else if (const auto* admitted = std::get_if<core::chunk_admitted>(&body)) {
    const auto it = closed_.find({rank, admitted->key});
    if (it == closed_.end()) return check_admission_after_failed(*admitted, rank, at);
    const closing& close = it->second;
    return sim::finding{"I4",
                        "I4: rank " + std::to_string(rank) + " admitted a chunk of " +
                            core::to_string(admitted->key) + " at step " + std::to_string(at.step) +
                            ", but the room was closed" +
                            (close.before_open ? " before it opened" : "") + " at step " +
                            std::to_string(close.at.step),
                        {close.at.index, at.index},
                        {}};
  } else if (const auto* change = std::get_if<core::status_changed>(&body)) {
    return check_status(*change, rank, at);
  } else if (const auto* released = std::get_if<core::request_pages_released>(&body)) {
    const auto it = injected_.find(released->key);
    if (released->reason != core::release_reason::completed || it == injected_.end()) {
      return std::nullopt;
    }
    return sim::finding{"I4",
                        "I4: rank " + std::to_string(rank) + " completed " +
                            core::to_string(released->key) + " at step " + std::to_string(at.step) +
                            ", but prefill rank " + std::to_string(it->second.first) +
                            " had failed it at step " + std::to_string(it->second.second.step) +
                            " (one Failed rank fails the request)",
                        {it->second.second.index, at.index},
                        {}};
  }
  return std::nullopt;
}

std::optional<sim::finding> closed_room_checker::check_admission_after_failed(
    const core::chunk_admitted& admitted, core::rank_id rank, event_mark at) const {
  const auto failed = failed_since_.find({rank, admitted.key});
  if (failed == failed_since_.end()) return std::nullopt;
  return sim::finding{"I4",
                      "I4: rank " + std::to_string(rank) + " admitted a chunk of " +
                          core::to_string(admitted.key) + " at step " + std::to_string(at.step) +
                          ", but the request had been Failed there since step " +
                          std::to_string(failed->second.step) +
                          " and its room was never closed (a failure closes admission)",
                      {failed->second.index, at.index},
                      {}};
}

std::optional<sim::finding> closed_room_checker::check_status(const core::status_changed& change,
                                                              core::rank_id rank, event_mark at) {
  const auto failed = failed_since_.find({rank, change.key});
  const bool claims_failed = change.from == core::kv_status::failed;
  if (!claims_failed) {
    // Into Failed (again) is not leaving it; anything else must not follow a Failed.
    if (change.to == core::kv_status::failed) failed_since_.try_emplace({rank, change.key}, at);
    if (failed == failed_since_.end() || change.to == core::kv_status::failed) return std::nullopt;
  }
  std::string message =
      "I4: rank " + std::to_string(rank) + " changed the status of " + core::to_string(change.key);
  std::vector<std::size_t> evidence{at.index};
  if (claims_failed) {
    message += std::string(" from Failed to ") + core::to_string(change.to) + " at step " +
               std::to_string(at.step);
    if (failed != failed_since_.end()) {
      message += " (Failed since step " + std::to_string(failed->second.step) + ")";
      evidence.push_back(failed->second.index);
    }
  } else {
    message += std::string(" to ") + core::to_string(change.to) + " at step " +
               std::to_string(at.step) + ", but it had been Failed since step " +
               std::to_string(failed->second.step) + " (the change says it came from " +
               (change.from ? core::to_string(*change.from) : "no status") + ")";
    evidence.push_back(failed->second.index);
  }
  sort_evidence(evidence);
  return sim::finding{"I4", std::move(message), std::move(evidence), {}};
}

}  // namespace kvsim::properties
