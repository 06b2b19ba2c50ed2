#include "properties/outcome_report_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {
namespace {

bool is_report(core::control_kind kind) {
  return kind == core::control_kind::chunk_ready || kind == core::control_kind::status;
}

const char* report_text(bool failed) { return failed ? "Failed" : "chunk_ready"; }

sim::finding make_finding(const char* invariant, std::string message, std::size_t first,
                          std::size_t second) {
  std::vector<std::size_t> evidence{first, second};
  sort_evidence(evidence);
  return sim::finding{invariant, std::string(invariant) + ": " + std::move(message),
                      std::move(evidence),
                      {}};
}

}  // namespace

sim::event_kinds outcome_report_checker::subscriptions() const {
  return sim::event_kinds::of<sim::transfer_submitted, sim::transfer_ended, sim::transfer_timed_out,
                              sim::failure_injected, sim::message_sent, core::request_finished,
                              core::outcome_reported, core::room_opened, core::room_closed,
                              core::ack_target_registered>();
}

std::optional<sim::finding> outcome_report_checker::observe(const sim::sim_event& e,
                                                            std::size_t index) {
  const event_mark at{e.step, index};
  if (const auto* submitted = std::get_if<sim::transfer_submitted>(&e.body)) {
    running_[submitted->transfer] = {{submitted->source_rank, submitted->owner}, at};
  } else if (const auto* ended = std::get_if<sim::transfer_ended>(&e.body)) {
    const auto it = running_.find(ended->transfer);
    if (it == running_.end()) return std::nullopt;
    if (ended->outcome != core::transfer_poll::succeeded) cause_.try_emplace(it->second.first, at);
    running_.erase(it);
  } else if (const auto* timed_out = std::get_if<sim::transfer_timed_out>(&e.body)) {
    // The sender takes a poll that timed out as the request's failure, whatever the copy does.
    const auto it = running_.find(timed_out->transfer);
    if (it != running_.end()) cause_.try_emplace(it->second.first, at);
  } else if (const auto* failure = std::get_if<sim::failure_injected>(&e.body)) {
    cause_.try_emplace({failure->rank, failure->key}, at);
  } else if (const auto* sent = std::get_if<sim::message_sent>(&e.body)) {
    if (!sent->injected && is_report(sent->kind)) return check_wire(*sent, at);
  } else if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    const core::rank_id rank = decided->what.rank;
    if (const auto* finished = std::get_if<core::request_finished>(&decided->what.body)) {
      return check_finished(*finished, rank, at);
    }
    if (const auto* reported = std::get_if<core::outcome_reported>(&decided->what.body)) {
      return check_report(*reported, rank, at);
    }
    note_core(decided->what, at);
  }
  return std::nullopt;
}

void outcome_report_checker::note_core(const core::event& e, event_mark at) {
  if (const auto* opened = std::get_if<core::room_opened>(&e.body)) {
    tracked_.insert({e.rank, opened->key});
  } else if (const auto* closed = std::get_if<core::room_closed>(&e.body)) {
    tracked_.insert({e.rank, closed->key});
  } else if (const auto* target = std::get_if<core::ack_target_registered>(&e.body)) {
    // Registered only for an ABORT the verifier accepted: the request has failed here.
    cause_.try_emplace({e.rank, target->key}, at);
  }
}

std::optional<sim::finding> outcome_report_checker::check_report(
    const core::outcome_reported& decided, core::rank_id rank, event_mark at) {
  const rank_room request{rank, decided.key};
  const bool failed = decided.failed;
  // Words only for a finding: this runs at every report.
  const auto about = [&] {
    return "prefill rank " + std::to_string(rank) + " told decode rank " +
           std::to_string(decided.to) + " at step " + std::to_string(at.step) + " that " +
           core::to_string(decided.key) + " ended " + report_text(failed);
  };

  const auto [earlier, first] =
      reports_.try_emplace({rank, decided.to, decided.key}, report{at, failed});
  if (!first) {
    return make_finding("I4",
                        about() + ", but it had told it " + report_text(earlier->second.failed) +
                            " at step " + std::to_string(earlier->second.at.step) +
                            " (one report per request and decode rank)",
                        earlier->second.at.index, at.index);
  }
  if (failed) failed_reported_.try_emplace(request, at);
  unsent_[{rank, decided.to, decided.key}] = failed;

  for (const auto& [transfer, where] : running_) {
    if (failed || where.first != request) continue;
    return make_finding("I4",
                        about() + " while its transfer submitted at step " +
                            std::to_string(where.second.step) +
                            " was still running (the report is the end of the request there)",
                        where.second.index, at.index);
  }
  const auto cause = cause_.find(request);
  if (!failed && cause != cause_.end()) {
    return make_finding("I4",
                        about() + ", but the request had failed there at step " +
                            std::to_string(cause->second.step) +
                            " (a request a prefill rank failed is never completed on decode)",
                        cause->second.index, at.index);
  }
  if (failed && cause == cause_.end()) {
    std::vector<std::size_t> evidence{at.index};
    return sim::finding{"I9",
                        "I9: " + about() +
                            ", but nothing failed it there (no failed or timed-out transfer, no "
                            "injected failure, no accepted ABORT)",
                        std::move(evidence),
                        {}};
  }
  return std::nullopt;
}

std::optional<sim::finding> outcome_report_checker::check_wire(const sim::message_sent& sent,
                                                               event_mark at) {
  if (!tracked_.contains({sent.from, sent.key})) return std::nullopt;  // no sender reports it
  const bool failed = sent.kind == core::control_kind::status;
  const auto it = unsent_.find({sent.from, sent.to, sent.key});
  if (it != unsent_.end() && it->second == failed) {
    unsent_.erase(it);
    return std::nullopt;
  }
  std::vector<std::size_t> evidence{at.index};
  return sim::finding{"I4",
                      "I4: prefill rank " + std::to_string(sent.from) + " sent decode rank " +
                          std::to_string(sent.to) + " " + report_text(failed) + " about " +
                          core::to_string(sent.key) + " at step " + std::to_string(at.step) +
                          ", a report its sender never decided" +
                          (it == unsent_.end() ? std::string()
                                               : std::string(" (it decided ") +
                                                     report_text(it->second) + ")"),
                      std::move(evidence),
                      {}};
}

std::optional<sim::finding> outcome_report_checker::check_finished(
    const core::request_finished& finished, core::rank_id rank, event_mark at) const {
  // Only one way round: an ABORT accepted after a chunk_ready was decided fails the request
  // here too late for decode to hear it (decode aborted it itself), but nothing turns a
  // Failed request back into a success.
  if (finished.outcome != core::request_outcome::succeeded) return std::nullopt;
  const auto told = failed_reported_.find({rank, finished.key});
  if (told == failed_reported_.end()) return std::nullopt;
  return make_finding("I4",
                      "prefill rank " + std::to_string(rank) + " finished " +
                          core::to_string(finished.key) + " at step " + std::to_string(at.step) +
                          " as " + core::to_string(finished.outcome) + ", but had told decode " +
                          report_text(true) + " at step " + std::to_string(told->second.step),
                      told->second.index, at.index);
}

}  // namespace kvsim::properties
