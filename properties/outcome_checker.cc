#include "properties/outcome_checker.h"

#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "properties/finding_text.h"
#include "sim/fault_profile.h"

namespace kvsim::properties {
namespace {

// The fault kinds that may fail a request no one aborted (spec/fault_kinds.h): not the
// scenario's own aborts, nor the adversary, whose messages a correct core refuses.
bool may_fail_a_request(std::string_view fault) {
  const auto kind = sim::fault_kind_from_string(fault);
  return !kind || spec::row_of(*kind).fails_requests;
}

}  // namespace

void outcome_checker::note_core(const core::event& e, event_mark at) {
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, core::abort_armed> ||
                      std::is_same_v<T, core::deadline_expired> ||
                      std::is_same_v<T, core::peer_death_handled> ||
                      std::is_same_v<T, core::transfer_unconfirmed>) {
          caused_.insert(body.key);
        } else if constexpr (std::is_same_v<T, core::allocation_refused>) {
          caused_.insert(body.owner);
        }
        if constexpr (std::is_same_v<T, core::pages_allocated>) {
          started_.try_emplace({e.rank, body.owner}, at);
        } else if constexpr (std::is_same_v<T, core::room_opened> ||
                             std::is_same_v<T, core::abort_armed>) {
          started_.try_emplace({e.rank, body.key}, at);
        }
      },
      e.body);
}

sim::event_kinds outcome_checker::subscriptions() const {
  return sim::event_kinds::of<core::request_finished, core::abort_armed, core::deadline_expired,
                              core::peer_death_handled, core::transfer_unconfirmed,
                              core::allocation_refused, core::pages_allocated, core::room_opened,
                              sim::fault_fired, sim::rank_stopped, sim::failure_injected,
                              sim::transfer_ended, sim::transfer_timed_out>();
}

std::optional<sim::finding> outcome_checker::observe(const sim::sim_event& e, std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    if (const auto* finished = std::get_if<core::request_finished>(&decided->what.body)) {
      return check_finish(*finished, decided->what.rank, at);
    }
    note_core(decided->what, at);
  } else if (const auto* fault = std::get_if<sim::fault_fired>(&e.body)) {
    if (may_fail_a_request(fault->what)) run_faulted_ = true;
  } else if (std::holds_alternative<sim::rank_stopped>(e.body)) {
    run_faulted_ = true;
  } else if (const auto* injected = std::get_if<sim::failure_injected>(&e.body)) {
    caused_.insert(injected->key);
  } else if (const auto* ended = std::get_if<sim::transfer_ended>(&e.body)) {
    if (ended->outcome != core::transfer_poll::succeeded) caused_.insert(ended->owner);
  } else if (const auto* timed_out = std::get_if<sim::transfer_timed_out>(&e.body)) {
    caused_.insert(timed_out->owner);
  }
  return std::nullopt;
}

std::optional<sim::finding> outcome_checker::check_finish(const core::request_finished& finished,
                                                          core::rank_id rank,
                                                          event_mark at) const {
  // A preemption is the engine's own cause (it made room); the request resumes as a new
  // incarnation, which owes its own finish.
  if (finished.outcome == core::request_outcome::succeeded ||
      finished.outcome == core::request_outcome::preempted) {
    return std::nullopt;
  }
  if (run_faulted_ || caused_.contains(finished.key)) return std::nullopt;
  std::vector<std::size_t> evidence{at.index};
  std::string began;
  if (const auto start = started_.find({rank, finished.key}); start != started_.end()) {
    evidence.push_back(start->second.index);
    began = " (it began there at step " + std::to_string(start->second.step) + ")";
  }
  sort_evidence(evidence);
  std::string message = "I9: " + core::to_string(finished.key) + " finished " +
                        core::to_string(finished.outcome) + " on rank " + std::to_string(rank) +
                        " at step " + std::to_string(at.step) + began +
                        " with no cause: nobody aborted it, no deadline of it expired, no "
                        "transfer of it failed and no fault fired before then";
  return sim::finding{"I9", std::move(message), std::move(evidence), {}};
}

}  // namespace kvsim::properties
