#include "properties/abort_authority_checker.h"

#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {

sim::event_kinds abort_authority_checker::subscriptions() const {
  return sim::event_kinds::of<core::token_issued, core::abort_armed, core::token_accepted,
                              core::token_rejected, core::ack_target_registered>();
}

std::optional<sim::finding> abort_authority_checker::observe(const sim::sim_event& e,
                                                             std::size_t index) {
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::event& what = decided->what;
  const event_mark at{e.step, index};
  if (const auto* issued = std::get_if<core::token_issued>(&what.body)) {
    issued_.try_emplace({what.rank, issued->key, issued->nonce}, at);
    latest_to_[{what.rank, issued->key, issued->audience}] = {issued->nonce, at};
  } else if (const auto* armed = std::get_if<core::abort_armed>(&what.body)) {
    return check_armed(*armed, what.rank, at);
  } else if (const auto* accepted = std::get_if<core::token_accepted>(&what.body)) {
    accepted_.insert({what.rank, accepted->key, accepted->nonce});
    return check_accepted(*accepted, what.rank, at);
  } else if (const auto* rejected = std::get_if<core::token_rejected>(&what.body)) {
    return check_rejected(*rejected, what.rank, at);
  } else if (const auto* target = std::get_if<core::ack_target_registered>(&what.body)) {
    return check_target(*target, what.rank, at);
  }
  return std::nullopt;
}

std::optional<sim::finding> abort_authority_checker::check_armed(const core::abort_armed& armed,
                                                                 core::rank_id rank,
                                                                 event_mark at) const {
  if (armed.expected_ranks.empty()) return std::nullopt;
  const core::rank_id first = armed.expected_ranks.front();
  const auto issued = latest_to_.find({rank, armed.key, first});
  if (issued != latest_to_.end() && issued->second.first == armed.nonce) return std::nullopt;
  std::vector<std::size_t> evidence{at.index};
  std::string message = "I2: rank " + std::to_string(rank) + " armed the abort of " +
                        core::to_string(armed.key) + " at step " + std::to_string(at.step) +
                        " naming nonce " + std::to_string(armed.nonce) + " for rank " +
                        std::to_string(first);
  if (issued == latest_to_.end()) {
    message += ", but it issued no token of that request to that rank";
  } else {
    message += ", but the token it issued that rank at step " +
               std::to_string(issued->second.second.step) + " has nonce " +
               std::to_string(issued->second.first);
    evidence.push_back(issued->second.second.index);
  }
  sort_evidence(evidence);
  return sim::finding{"I2", std::move(message), std::move(evidence), {}};
}

std::optional<sim::finding> abort_authority_checker::check_rejected(
    const core::token_rejected& rejected, core::rank_id rank, event_mark at) {
  const core::room_key& expected = rejected.expected;
  const core::room_key& claimed = rejected.claimed;
  const bool same_room = claimed.room == expected.room;
  bool agrees = true;
  switch (rejected.reason) {
    case core::token_rejection::forged:
      break;  // a forged token's keys may say anything
    case core::token_rejection::foreign_room:
      agrees = !same_room;
      break;
    case core::token_rejection::stale_generation:
      agrees = same_room && claimed.generation < expected.generation;
      break;
    case core::token_rejection::future_generation:
      agrees = same_room && claimed.generation > expected.generation;
      break;
    case core::token_rejection::duplicate:
    case core::token_rejection::foreign_issuer:
    case core::token_rejection::retired:
    case core::token_rejection::unproven:
    case core::token_rejection::not_a_party:
    case core::token_rejection::not_issued:
      agrees = claimed == expected;
      break;
  }
  if (agrees) return std::nullopt;
  return sim::finding{"I2",
                      "I2: rank " + std::to_string(rank) + "'s verifier refused a token as " +
                          core::to_string(rejected.reason) + " at step " +
                          std::to_string(at.step) + ", but it claims " + core::to_string(claimed) +
                          " where " + core::to_string(expected) + " was expected",
                      {at.index},
                      {}};
}

std::optional<sim::finding> abort_authority_checker::check_accepted(
    const core::token_accepted& accepted, core::rank_id rank, event_mark at) {
  // Words only for a finding: this runs at every accepted token.
  const auto token = [&] {
    return "the token of " + core::to_string(accepted.key) + " (issuer rank " +
           std::to_string(accepted.issuer) + ", audience rank " +
           std::to_string(accepted.audience) + ", nonce " + std::to_string(accepted.nonce) + ")";
  };
  // An ABORT passes from the token's issuer to its audience, a drain-ACK back.
  const bool abort_to_audience = accepted.presenter == accepted.issuer && rank == accepted.audience;
  const bool ack_to_issuer = rank == accepted.issuer && accepted.presenter == accepted.audience;
  if (!abort_to_audience && !ack_to_issuer) {
    return sim::finding{"I2",
                        "I2: rank " + std::to_string(rank) + "'s verifier accepted " + token() +
                            " from rank " + std::to_string(accepted.presenter) + " at step " +
                            std::to_string(at.step) +
                            ": a token is good only between its issuer and its audience",
                        {at.index},
                        {}};
  }
  const auto [first, inserted] = accepted_from_.try_emplace(
      {rank, accepted.key, accepted.nonce, accepted.presenter}, at);
  if (inserted) return std::nullopt;
  return sim::finding{"I2",
                      "I2: rank " + std::to_string(rank) + "'s verifier accepted " + token() +
                          " from rank " + std::to_string(accepted.presenter) +
                          " a second time at step " + std::to_string(at.step) +
                          " (first at step " + std::to_string(first->second.step) +
                          "): a replayed message must be refused",
                      {first->second.index, at.index},
                      {}};
}

std::optional<sim::finding> abort_authority_checker::check_target(
    const core::ack_target_registered& target, core::rank_id rank, event_mark at) const {
  std::vector<std::string> reasons;
  std::vector<std::size_t> evidence{at.index};
  const auto issue = issued_.find({target.decode_rank, target.key, target.nonce});
  if (issue == issued_.end()) {
    reasons.push_back("rank " + std::to_string(target.decode_rank) +
                      " never issued that token");
  } else {
    evidence.push_back(issue->second.index);
  }
  if (!accepted_.contains({rank, target.key, target.nonce})) {
    reasons.push_back("rank " + std::to_string(rank) + "'s verifier never accepted it");
  }
  if (reasons.empty()) return std::nullopt;
  sort_evidence(evidence);
  std::string message = "I2: rank " + std::to_string(rank) + " registered a drain-ACK target for " +
                        core::to_string(target.key) + " (decode rank " +
                        std::to_string(target.decode_rank) + ", nonce " +
                        std::to_string(target.nonce) + ") at step " + std::to_string(at.step) +
                        " but " + join_and(reasons);
  return sim::finding{"I2", std::move(message), std::move(evidence), {}};
}

}  // namespace kvsim::properties
