#include "properties/release_after_acks_checker.h"

#include <string>
#include <variant>

#include "properties/finding_text.h"

namespace kvsim::properties {
namespace {

// "the drain-ACK from rank 2 was" / "drain-ACKs from ranks 0 and 2 were"
std::string missing_text(const std::vector<core::rank_id>& missing) {
  return (missing.size() == 1 ? "the drain-ACK from " : "drain-ACKs from ") + ranks_text(missing) +
         (missing.size() == 1 ? " was" : " were") + " still missing";
}

}  // namespace

sim::event_kinds release_after_acks_checker::subscriptions() const {
  return sim::event_kinds::of<sim::transport_torn_down, sim::rank_stopped, core::abort_armed,
                              core::drain_ack_sent, core::drain_ack_counted,
                              core::teardown_counted, core::peer_death_handled,
                              core::page_freed, core::request_pages_released>();
}

std::optional<sim::finding> release_after_acks_checker::observe(const sim::sim_event& e,
                                                                std::size_t index) {
  if (const auto* torn = std::get_if<sim::transport_torn_down>(&e.body)) {
    torn_down_.insert(torn->rank);
    return std::nullopt;
  }
  if (const auto* stopped = std::get_if<sim::rank_stopped>(&e.body)) {
    stopped_.insert(stopped->rank);
    return std::nullopt;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  const event_mark at{e.step, index};
  const core::event_body& body = decided->what.body;

  if (const auto* armed = std::get_if<core::abort_armed>(&body)) {
    armed_abort& abort =
        armed_.try_emplace({rank, armed->key}, armed_abort{at, {}, {}}).first->second;
    abort.expected.insert(armed->expected_ranks.begin(), armed->expected_ranks.end());
  } else if (const auto* sent = std::get_if<core::drain_ack_sent>(&body)) {
    sent_.try_emplace({rank, sent->key, sent->to}, at);
  } else if (const auto* counted = std::get_if<core::drain_ack_counted>(&body)) {
    const auto abort = armed_.find({rank, counted->key});
    if (abort != armed_.end()) {
      const bool real = sent_.contains({counted->from, counted->key, rank});
      auto [it, fresh] = abort->second.counted.try_emplace(counted->from, counted_ack{at, real});
      // A real ACK heals a count that was not: the rank has drained after all.
      if (!fresh && real && !it->second.sent) it->second = counted_ack{at, true};
    }
  } else if (const auto* teardown = std::get_if<core::teardown_counted>(&body)) {
    const auto abort = armed_.find({rank, teardown->key});
    if (abort != armed_.end()) {
      const bool real = torn_down_.contains(teardown->peer);
      auto [it, fresh] =
          abort->second.counted.try_emplace(teardown->peer, counted_ack{at, real, true});
      if (!fresh && real && !it->second.sent) it->second = counted_ack{at, true, true};
    }
  } else if (const auto* lost = std::get_if<core::peer_death_handled>(&body)) {
    return check_peer_death(*lost, rank, at);
  } else if (const auto* freed = std::get_if<core::page_freed>(&body)) {
    return check_free(*freed, rank, at);
  } else if (const auto* released = std::get_if<core::request_pages_released>(&body)) {
    return check_release(*released, rank, at);
  }
  return std::nullopt;
}

bool release_after_acks_checker::all_counted(const armed_abort& abort) {
  for (core::rank_id expected : abort.expected) {
    const auto counted = abort.counted.find(expected);
    if (counted == abort.counted.end() || !counted->second.sent) return false;
  }
  return true;
}

release_after_acks_checker::verdict release_after_acks_checker::judge(
    const armed_abort& abort, core::rank_id decode_rank, const core::room_key& key) const {
  verdict v;
  v.evidence.push_back(abort.armed.index);
  for (core::rank_id expected : abort.expected) {  // ascending
    const std::string who = "rank " + std::to_string(expected);
    const auto counted = abort.counted.find(expected);
    if (counted == abort.counted.end()) {
      v.missing.push_back(expected);
      v.details.push_back(who + ": no drain-ACK counted");
    } else if (!counted->second.sent && counted->second.teardown) {
      v.missing.push_back(expected);
      v.details.push_back(who + "'s teardown counted at step " +
                          std::to_string(counted->second.at.step) + " does not count: " + who +
                          "'s transport had not confirmed it torn down");
      v.evidence.push_back(counted->second.at.index);
    } else if (!counted->second.sent) {
      v.missing.push_back(expected);
      v.details.push_back(who + "'s drain-ACK counted at step " +
                          std::to_string(counted->second.at.step) + " does not count: " + who +
                          " sent none for " + core::to_string(key) + " to rank " +
                          std::to_string(decode_rank));
      v.evidence.push_back(counted->second.at.index);
    } else {
      v.details.push_back(who + (counted->second.teardown ? "'s teardown" : "'s drain-ACK") +
                          " counted at step " + std::to_string(counted->second.at.step));
    }
  }
  return v;
}

namespace {

std::vector<core::rank_id> ranks_of(const std::set<core::rank_id>& ranks) {
  return {ranks.begin(), ranks.end()};
}

std::string armed_text(std::uint64_t step, const std::set<core::rank_id>& expected) {
  return "(abort armed at step " + std::to_string(step) +
         (expected.empty() ? ", expecting no rank)"
                           : ", expecting " + ranks_text(ranks_of(expected)) + ")");
}

}  // namespace

std::optional<sim::finding> release_after_acks_checker::check_free(const core::page_freed& freed,
                                                                   core::rank_id rank,
                                                                   event_mark at) const {
  const auto abort = armed_.find({rank, freed.owner});
  if (abort == armed_.end() || all_counted(abort->second)) return std::nullopt;
  verdict v = judge(abort->second, rank, freed.owner);
  if (v.missing.empty()) return std::nullopt;
  v.evidence.push_back(at.index);
  sort_evidence(v.evidence);
  std::string message =
      "I3: rank " + std::to_string(rank) + " freed page " + std::to_string(freed.page) + " of " +
      core::to_string(freed.owner) + " at step " + std::to_string(at.step) + " while " +
      missing_text(v.missing) + " " + armed_text(abort->second.armed.step, abort->second.expected);
  return sim::finding{"I3", std::move(message), std::move(v.evidence), std::move(v.details)};
}

std::optional<sim::finding> release_after_acks_checker::check_release(
    const core::request_pages_released& released, core::rank_id rank, event_mark at) const {
  const bool all_acks = released.reason == core::release_reason::all_acks;
  if (!all_acks && released.reason != core::release_reason::acks_and_teardowns) {
    return std::nullopt;
  }
  // Words only for a finding: this runs at every release.
  const auto head = [&] {
    return "I3: rank " + std::to_string(rank) + " released the pages of " +
           core::to_string(released.key) + " for " + core::to_string(released.reason) +
           " at step " + std::to_string(at.step);
  };
  const auto reported = [&] {
    return std::to_string(released.acks_received) + " of " +
           std::to_string(released.acks_expected) + " drain-ACKs received";
  };
  if (const auto abort = armed_.find({rank, released.key});
      abort != armed_.end() && !all_counted(abort->second)) {
    verdict v = judge(abort->second, rank, released.key);
    if (!v.missing.empty()) {
      v.evidence.push_back(at.index);
      sort_evidence(v.evidence);
      v.details.push_back("the release reported " + reported());
      return sim::finding{"I3",
                          head() + " while " + missing_text(v.missing) + " " +
                              armed_text(abort->second.armed.step, abort->second.expected),
                          std::move(v.evidence), std::move(v.details)};
    }
  }
  if (all_acks && released.acks_received < released.acks_expected) {
    return sim::finding{"I3", head() + " with only " + reported(), {at.index}, {}};
  }
  return std::nullopt;
}

// A peer counts as lost only once it really stopped (its heartbeat is gone for good), and a
// request handles each lost peer once: a live peer taken for dead aborts a request nobody
// asked to abort, and a death handled twice re-arms the drain it is already waiting on.
std::optional<sim::finding> release_after_acks_checker::check_peer_death(
    const core::peer_death_handled& lost, core::rank_id rank, event_mark at) {
  std::string why;
  if (!stopped_.contains(lost.peer)) {
    why = "but rank " + std::to_string(lost.peer) + " never stopped";
  } else if (const auto [first, fresh] = handled_.try_emplace({rank, lost.key, lost.peer}, at);
             !fresh) {
    why = "a second time (first at step " + std::to_string(first->second.step) + ")";
  }
  if (why.empty()) return std::nullopt;
  return sim::finding{"I3",
                      "I3: rank " + std::to_string(rank) + " handled the death of rank " +
                          std::to_string(lost.peer) + " for " + core::to_string(lost.key) +
                          " at step " + std::to_string(at.step) + " " + why,
                      {at.index},
                      {}};
}

}  // namespace kvsim::properties
