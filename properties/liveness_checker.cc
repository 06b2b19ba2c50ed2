#include "properties/liveness_checker.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "properties/finding_text.h"

namespace kvsim::properties {
namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

std::string us(std::uint64_t t) { return std::to_string(t) + "us"; }

}  // namespace

std::uint64_t liveness_from_us(const sim::fault_profile& faults) {
  return faults.faults_stop_us == sim::faults_never_stop ? 0 : faults.faults_stop_us;
}

void liveness_checker::start(core::rank_id rank, const core::room_key& key, const char* by,
                             event_mark at, std::uint64_t time_us) {
  const auto [it, fresh] = requests_[rank].try_emplace(key);
  if (!fresh) return;  // started (or finished) already
  request& r = it->second;
  r.started = at;
  r.started_us = time_us;
  r.started_by = by;
  r.deadline_us = saturating_add(std::max(heal_from_us_, time_us), bound_us_);
  unfinished_.emplace(r.deadline_us, rank, key);
}

const liveness_checker::request& liveness_checker::request_of(const rank_room& who) const {
  return requests_.at(who.first).at(who.second);
}

// "room 7/gen 0 on rank 1 started at t=0us"
std::string liveness_checker::request_text(const rank_room& who, const request& r) const {
  return core::to_string(who.second) + " on rank " + std::to_string(who.first) +
         " started at t=" + us(r.started_us);
}

// Everything: any event past a request's due time is where I9 fires, whatever its kind.
sim::event_kinds liveness_checker::subscriptions() const {
  return sim::event_kinds::all();
}

std::optional<sim::finding> liveness_checker::observe(const sim::sim_event& e, std::size_t index) {
  // Overdue before this event counts: a request_finished that comes too late still fires.
  if (auto found = check_deadlines(e.step, e.time_us, index)) return found;
  if (const auto* stopped = std::get_if<sim::rank_stopped>(&e.body)) {
    forget_rank(stopped->rank);
    return std::nullopt;
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  if (stopped_.contains(rank)) return std::nullopt;  // a dead rank's last decisions owe nothing
  const event_mark at{e.step, index};
  const core::event_body& body = decided->what.body;
  if (const auto* allocated = std::get_if<core::pages_allocated>(&body)) {
    start(rank, allocated->owner, "pages_allocated", at, e.time_us);
  } else if (const auto* opened = std::get_if<core::room_opened>(&body)) {
    start(rank, opened->key, "room_opened", at, e.time_us);
  } else if (const auto* armed = std::get_if<core::abort_armed>(&body)) {
    start(rank, armed->key, "abort_armed", at, e.time_us);
  } else if (const auto* finished = std::get_if<core::request_finished>(&body)) {
    const auto [it, fresh] = requests_[rank].try_emplace(finished->key);
    if (!fresh && !it->second.finished) {
      unfinished_.erase({it->second.deadline_us, rank, finished->key});
    }
    it->second.finished = true;  // one never started stays finished: it cannot start later
  }
  return std::nullopt;
}

// A rank that died (peer death) owes no request: what it had started died with it. The
// survivors' requests are still judged.
void liveness_checker::forget_rank(core::rank_id rank) {
  stopped_.insert(rank);
  for (auto it = unfinished_.begin(); it != unfinished_.end();) {
    it = std::get<1>(*it) == rank ? unfinished_.erase(it) : std::next(it);
  }
}

std::optional<sim::finding> liveness_checker::check_deadlines(
    std::uint64_t step, std::uint64_t time_us, std::optional<std::size_t> index) const {
  if (unfinished_.empty() || std::get<0>(*unfinished_.begin()) >= time_us) return std::nullopt;
  std::optional<sim::finding> found;
  for (const auto& [deadline, rank, key] : unfinished_) {
    if (deadline >= time_us) break;
    const rank_room who{rank, key};
    const request& r = request_of(who);
    if (!found) {
      std::string message = "I9: " + request_text(who, r) +
                            " has not finished by t=" + us(deadline) + ", " + us(bound_us_) +
                            " after ";
      message += r.started_us > heal_from_us_ ? std::string("it started")
                                              : "faults stopped at t=" + us(heal_from_us_);
      found = sim::finding{"I9", std::move(message), {}, {}};
      if (index) found->evidence.push_back(*index);
    }
    found->evidence.push_back(r.started.index);
    found->details.push_back(request_text(who, r) + " (step " + std::to_string(r.started.step) +
                             ", " + r.started_by + "), due by t=" + us(deadline) +
                             ", unfinished at step " + std::to_string(step) +
                             " (t=" + us(time_us) + ")");
  }
  sort_evidence(found->evidence);
  return found;
}

std::vector<liveness_checker::rank_room> liveness_checker::unfinished_in_start_order() const {
  std::vector<std::pair<event_mark, rank_room>> left;
  for (const auto& [deadline, rank, key] : unfinished_) {
    left.emplace_back(request_of({rank, key}).started, rank_room{rank, key});
  }
  std::sort(left.begin(), left.end(),
            [](const auto& a, const auto& b) { return a.first.index < b.first.index; });
  std::vector<rank_room> out;
  out.reserve(left.size());
  for (const auto& [mark, who] : left) out.push_back(who);
  return out;
}

std::optional<sim::finding> liveness_checker::at_quiescence() {
  const std::vector<rank_room> left = unfinished_in_start_order();
  if (left.empty()) return std::nullopt;
  sim::finding found{"I9", "I9: ", {}, {}};
  for (std::size_t i = 0; i < left.size(); ++i) {
    const request& r = request_of(left[i]);
    found.message += (i ? "; " : "") + request_text(left[i], r) + " never finished";
    found.evidence.push_back(r.started.index);
    found.details.push_back(request_text(left[i], r) + " (step " +
                            std::to_string(r.started.step) + ", " + r.started_by +
                            "), never finished");
  }
  return found;
}

// A run that spins (every actor polls or sleeps, nothing is decided) emits no event after a
// deadline passes; cut short by the step limit, it is judged at the clock it reached.
std::optional<sim::finding> liveness_checker::at_step_limit(std::uint64_t step,
                                                            std::uint64_t now_us) {
  return check_deadlines(step, now_us, std::nullopt);
}

std::vector<std::string> liveness_checker::still_open() const {
  std::vector<std::string> lines;
  for (const rank_room& who : unfinished_in_start_order()) {
    const request& r = request_of(who);
    lines.push_back("unfinished: " + request_text(who, r) + " (step " +
                    std::to_string(r.started.step) + ", " + r.started_by + "), due by t=" +
                    us(r.deadline_us));
  }
  return lines;
}

}  // namespace kvsim::properties
