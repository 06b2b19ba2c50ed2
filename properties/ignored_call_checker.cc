#include "properties/ignored_call_checker.h"

#include <utility>
#include <variant>

namespace kvsim::properties {

// Every decision: any decision made during a call to ignore, but a refusal, is a finding.
sim::event_kinds ignored_call_checker::subscriptions() const {
  return sim::event_kinds::of<sim::ignored_call_attempted, sim::core_decided,
                              sim::ignored_call_answered>();
}

std::optional<sim::finding> ignored_call_checker::observe(const sim::sim_event& e,
                                                          std::size_t index) {
  if (const auto* call = std::get_if<sim::ignored_call_attempted>(&e.body)) {
    open_ = open_call{*call, {index}, {}};
    return std::nullopt;
  }
  if (const auto* made = std::get_if<sim::core_decided>(&e.body)) {
    if (!open_ || made->what.rank != open_->call.rank) return std::nullopt;
    if (std::holds_alternative<core::lifetime_refused>(made->what.body)) return std::nullopt;
    open_->evidence.push_back(index);
    open_->decisions.push_back(core::describe(made->what));
    return std::nullopt;
  }
  const auto* answer = std::get_if<sim::ignored_call_answered>(&e.body);
  if (answer == nullptr || !open_ || answer->rank != open_->call.rank) return std::nullopt;
  open_call done = std::move(*open_);
  open_.reset();
  done.evidence.push_back(index);
  std::vector<std::string> problems;
  if (answer->accepted) problems.push_back("the core accepted it");
  for (const std::string& decision : done.decisions) {
    problems.push_back("the core decided " + decision);
  }
  if (problems.empty()) return std::nullopt;
  return sim::finding{"misuse",
                      "misuse: careless " + std::string(sim::to_string(done.call.call)) + " of " +
                          core::to_string(done.call.key) + " on rank " +
                          std::to_string(done.call.rank) + " at step " + std::to_string(e.step) +
                          ", a call to ignore: " + problems.front(),
                      std::move(done.evidence), std::move(problems)};
}

}  // namespace kvsim::properties
