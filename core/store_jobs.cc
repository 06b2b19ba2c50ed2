#include "core/store_jobs.h"

#include <algorithm>
#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

store_jobs::store_jobs(rank_id rank, page_ledger& ledger, store_engine* engine,
                       event_sink& events, variant v, store_limits limits)
    : rank_(rank), ledger_(ledger), engine_(engine), events_(events), variant_(v), limits_(limits) {
  KVSIM_INVARIANT(limits_.jobs_in_flight_max > 0, "a store table holds at least one job");
}

void store_jobs::emit(event_body body) { events_.emit_built(event{rank_, std::move(body)}); }

std::optional<store_job_id> store_jobs::start(room_key owner, std::span<const page_index> pages) {
  KVSIM_INVARIANT(can_store(), "store_jobs::start on a rank built without a store engine");
  if (in_flight() >= limits_.jobs_in_flight_max) {
    emit(store_job_refused{owner, in_flight()});
    return std::nullopt;
  }
  std::optional<lease_id> lease;
  // Historical (B15): the job is queued with no reference on the pages; it reads them when
  // the transport's thread gets to it, whatever the pool did with them in between.
  if (!variant_.has(bug::b15_unleased_store)) {
    auto leased = ledger_.lease(owner, lease_role::source, pages);
    if (!leased) return std::nullopt;  // the ledger emitted its refusal
    lease = leased.value();
  }
  const store_job_id id = next_job_++;
  std::vector<page_index> copied(pages.begin(), pages.end());
  jobs_.emplace(id, job_record{owner, copied, lease});
  by_owner_[owner].insert(id);
  emit(store_job_started{id, owner, copied, lease});
  engine_->submit(id, owner, copied);
  return id;
}

std::optional<store_job_id> store_jobs::counted_against(store_job_id job, room_key owner) const {
  if (variant_.has(bug::b13_store_done_by_request)) {
    // Historical: completions decrement a count kept per request id (the room), so the one
    // they land on is whichever incarnation of the room stores now: the newest job of it.
    const auto newest = std::find_if(jobs_.rbegin(), jobs_.rend(), [&](const auto& entry) {
      return entry.second.owner.room == owner.room;
    });
    if (newest == jobs_.rend()) return std::nullopt;
    return newest->first;
  }
  if (!jobs_.contains(job)) return std::nullopt;
  return job;
}

void store_jobs::on_done(store_job_id job, room_key owner, bool stored) {
  const auto it = jobs_.find(job);
  if (it != jobs_.end() && it->second.owner != owner) {
    emit(store_completion_ignored{job, owner, store_ignore_reason::owner_mismatch});
    return;
  }
  const auto counted = counted_against(job, owner);
  if (!counted) {
    emit(store_completion_ignored{job, owner,
                                  remembered_.contains(job) ? store_ignore_reason::already_counted
                                                            : store_ignore_reason::not_in_flight});
    return;
  }
  emit(store_job_done{job, owner, stored, jobs_.at(*counted).lease});
  finish(*counted);
}

void store_jobs::finish(store_job_id id) {
  auto node = jobs_.extract(id);
  KVSIM_INVARIANT(!node.empty(), "finishing a store job that is not in flight");
  const job_record& done = node.mapped();
  const auto owned = by_owner_.find(done.owner);
  KVSIM_INVARIANT(owned != by_owner_.end() && owned->second.erase(id) == 1,
                  "a store job in flight is indexed under its owner");
  if (owned->second.empty()) by_owner_.erase(owned);
  remember(id);
  if (done.lease) (void)ledger_.end_lease(*done.lease);  // frees what the owner released
}

void store_jobs::abandon_jobs_of(room_key owner) {
  const auto owned = by_owner_.find(owner);
  if (owned == by_owner_.end()) return;
  const std::set<store_job_id> ids = owned->second;
  for (store_job_id id : ids) {
    emit(store_job_abandoned{id, owner});
    finish(id);
  }
}

void store_jobs::remember(store_job_id job) {
  remembered_.insert(job);
  remembered_order_.emplace(next_remembered_++, job);
  if (remembered_order_.size() > limits_.completions_remembered) {
    const auto oldest = remembered_order_.begin();
    emit(store_completion_forgotten{oldest->second});
    remembered_.erase(oldest->second);
    remembered_order_.erase(oldest);
  }
}

std::vector<std::string> store_jobs::held() const {
  std::vector<std::string> lines;
  for (const auto& [id, j] : jobs_) {
    lines.push_back("store job " + std::to_string(id) + " of " + to_string(j.owner) +
                    " still in flight on " + pages_text(j.pages));
  }
  return lines;
}

std::vector<std::string> store_jobs::check_consistency() const {
  std::vector<std::string> problems;
  std::size_t indexed = 0;
  for (const auto& [owner, ids] : by_owner_) {
    if (ids.empty()) problems.push_back(to_string(owner) + " indexed with no store job");
    for (store_job_id id : ids) {
      const auto it = jobs_.find(id);
      if (it == jobs_.end() || it->second.owner != owner) {
        problems.push_back("store job " + std::to_string(id) + " indexed under " +
                           to_string(owner) + " is not its job in flight");
      }
      ++indexed;
    }
  }
  if (indexed != jobs_.size()) problems.push_back("store jobs in flight and their index differ");
  if (jobs_.size() > limits_.jobs_in_flight_max) problems.push_back("store table over its bound");
  if (remembered_.size() != remembered_order_.size() ||
      remembered_.size() > limits_.completions_remembered) {
    problems.push_back("remembered store completions and their order differ or overflow");
  }
  for (const auto& [id, j] : jobs_) {
    if (remembered_.contains(id)) {
      problems.push_back("store job " + std::to_string(id) + " in flight and counted done");
    }
  }
  return problems;
}

}  // namespace kvsim::core
