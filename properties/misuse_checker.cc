#include "properties/misuse_checker.h"

#include <algorithm>
#include <set>
#include <variant>

namespace kvsim::properties {
namespace {

std::string refusal_text(core::ledger_error error, const core::room_key& caller,
                         const std::optional<core::page_index>& page,
                         const std::optional<core::lease_id>& lease) {
  std::string text = std::string(core::to_string(error)) + " (caller " + core::to_string(caller);
  if (page) text += ", page " + std::to_string(*page);
  if (lease) text += ", lease " + std::to_string(*lease);
  return text + ")";
}

std::string refusal_text(const predicted_refusal& r) {
  return refusal_text(r.error, r.caller, r.page, r.lease);
}

std::string refusal_text(const core::ledger_misuse& m) {
  return refusal_text(m.error, m.caller, m.page, m.lease);
}

std::string call_text(const sim::misuse_attempted& call) {
  std::string text = std::string(sim::to_string(call.call)) + " on rank " + std::to_string(call.rank);
  switch (call.call) {
    case sim::ledger_call::allocate:
      return text + " by " + core::to_string(call.caller) + " of " + std::to_string(call.count) +
             " page(s)";
    case sim::ledger_call::lease:
    case sim::ledger_call::release:
      return text + " by " + core::to_string(call.caller) + " of pages " + pages_text(call.pages);
    case sim::ledger_call::release_all:
      return text + " by " + core::to_string(call.caller);
    case sim::ledger_call::end_lease:
    case sim::ledger_call::quarantine:
    case sim::ledger_call::confirm_quarantine:
      return text + " of lease " + std::to_string(call.lease);
  }
  return text;
}

}  // namespace

// Every decision: whatever a rank decides during a careless call is part of its answer.
sim::event_kinds misuse_checker::subscriptions() const {
  return sim::event_kinds::of<sim::core_decided, sim::misuse_attempted, sim::misuse_answered>();
}

std::optional<sim::finding> misuse_checker::observe(const sim::sim_event& e, std::size_t index) {
  ownership_.observe(e, index);
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    if (const auto* started = std::get_if<core::lease_started>(&decided->what.body)) {
      core::lease_id& last = last_lease_issued_[decided->what.rank];
      last = std::max(last, started->lease);
    }
    if (!open_ || decided->what.rank != open_->call.rank) return std::nullopt;
    open_->evidence.push_back(index);
    if (const auto* misuse = std::get_if<core::ledger_misuse>(&decided->what.body)) {
      open_->refusals.push_back(*misuse);
    } else {
      open_->other_decisions.push_back(core::describe(decided->what));
    }
    return std::nullopt;
  }
  if (const auto* call = std::get_if<sim::misuse_attempted>(&e.body)) {
    const bool harmless =
        call->call == sim::ledger_call::release_all && !holds_pages(call->rank, call->caller);
    open_ = open_call{*call, predict(*call), {index}, {}, {}, harmless};
    return std::nullopt;
  }
  if (const auto* answer = std::get_if<sim::misuse_answered>(&e.body)) return close(*answer, index);
  return std::nullopt;
}

bool misuse_checker::holds_pages(core::rank_id rank, const core::room_key& caller) const {
  const auto view = ownership_.view().ranks().find(rank);
  if (view == ownership_.view().ranks().end()) return false;
  for (const auto& [page, p] : view->second.pages) {
    if (p.owner == caller && !p.retiring) return true;
  }
  return false;
}

std::optional<predicted_refusal> misuse_checker::predict(const sim::misuse_attempted& call) const {
  switch (call.call) {
    case sim::ledger_call::release_all:
      return std::nullopt;  // never refused: harmless or a real release (see close)
    case sim::ledger_call::allocate:
      // Only an empty allocation is misuse; a too large one is back-pressure, not misuse.
      if (call.count != 0) return std::nullopt;
      return predicted_refusal{core::ledger_error::empty_request, call.caller, {}, {}};
    case sim::ledger_call::lease:
    case sim::ledger_call::release:
      return predict_pages(call);
    case sim::ledger_call::end_lease:
    case sim::ledger_call::quarantine:
    case sim::ledger_call::confirm_quarantine:
      return predict_lease(call);
  }
  return std::nullopt;
}

std::optional<predicted_refusal> misuse_checker::predict_pages(
    const sim::misuse_attempted& call) const {
  const bool is_lease = call.call == sim::ledger_call::lease;
  const auto refusal = [&](core::ledger_error error, std::optional<core::page_index> page) {
    return predicted_refusal{error, call.caller, page, {}};
  };
  if (call.pages.empty()) return refusal(core::ledger_error::empty_request, {});
  std::set<core::page_index> seen;
  for (const core::page_index page : call.pages) {
    if (page >= call.pages_total) return refusal(core::ledger_error::page_out_of_range, page);
    if (!seen.insert(page).second) return refusal(core::ledger_error::duplicate_page, page);
  }
  for (const core::page_index page : call.pages) {
    const page_view& view = ownership_.view().page(call.rank, page);
    if (!view.owner) {
      return refusal(is_lease ? core::ledger_error::page_not_owned : core::ledger_error::double_release,
                     page);
    }
    if (*view.owner != call.caller) return refusal(core::ledger_error::not_owner, page);
    if (view.retiring) {
      return refusal(is_lease ? core::ledger_error::page_retiring : core::ledger_error::double_release,
                     page);
    }
  }
  return std::nullopt;
}

std::optional<predicted_refusal> misuse_checker::predict_lease(
    const sim::misuse_attempted& call) const {
  const auto rank = ownership_.view().ranks().find(call.rank);
  const lease_view* live = nullptr;
  if (rank != ownership_.view().ranks().end()) {
    const auto it = rank->second.leases.find(call.lease);
    if (it != rank->second.leases.end()) live = &it->second;
  }
  if (live == nullptr) {
    const auto last = last_lease_issued_.find(call.rank);
    const core::lease_id last_issued = last == last_lease_issued_.end() ? 0 : (*last).second;
    const bool never_issued = call.lease == 0 || call.lease > last_issued;
    return predicted_refusal{
        never_issued ? core::ledger_error::unknown_lease : core::ledger_error::lease_underflow,
        core::room_key{}, {}, call.lease};
  }
  const bool wants_quarantined = call.call == sim::ledger_call::confirm_quarantine;
  if (live->quarantined == wants_quarantined) return std::nullopt;
  return predicted_refusal{wants_quarantined ? core::ledger_error::lease_not_quarantined
                                             : core::ledger_error::lease_quarantined,
                           live->owner, {}, call.lease};
}

std::optional<sim::finding> misuse_checker::close(const sim::misuse_answered& answer,
                                                  std::size_t index) {
  if (!open_ || open_->call.rank != answer.rank) return std::nullopt;
  open_call done = std::move(*open_);
  open_.reset();
  done.evidence.push_back(index);
  const std::string call = "careless " + call_text(done.call);
  std::vector<std::string> problems;
  if (done.harmless) {
    if (answer.error) {
      problems.push_back(std::string("answered ") + core::to_string(*answer.error) +
                         ", but the room holds nothing to release: accepted, no change");
    }
    for (const core::ledger_misuse& refusal : done.refusals) {
      problems.push_back("reported " + refusal_text(refusal) + " for a call that is no misuse");
    }
  } else if (!done.expected) {
    problems.push_back("by the ledger's own history the call is no misuse (the world made a call "
                       "it should not have, trusting the ledger's accessors)");
  } else {
    const predicted_refusal& expected = *done.expected;
    if (answer.error != expected.error) {
      problems.push_back(std::string("answered ") +
                         (answer.error ? core::to_string(*answer.error) : "accepted") +
                         ", the history says " + core::to_string(expected.error));
    }
    if (done.refusals.size() != 1) {
      problems.push_back(std::to_string(done.refusals.size()) +
                         " ledger_misuse event(s), expected one: " + refusal_text(expected));
    }
    for (const core::ledger_misuse& refusal : done.refusals) {
      const predicted_refusal reported{refusal.error, refusal.caller, refusal.page, refusal.lease};
      if (reported != expected) {
        problems.push_back("reported " + refusal_text(refusal) + ", the history says " +
                           refusal_text(expected));
      }
    }
  }
  for (const std::string& decision : done.other_decisions) {
    problems.push_back("the refused call changed the ledger: " + decision);
  }
  if (problems.empty()) return std::nullopt;
  return sim::finding{"misuse", "misuse: " + call + ": " + problems.front(), done.evidence,
                      problems};
}

}  // namespace kvsim::properties
