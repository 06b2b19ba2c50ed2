#include "core/running_requests.h"

#include <algorithm>
#include <utility>

namespace kvsim::core {

running_requests::running_requests(rank_id rank, page_ledger& ledger, store_engine* store,
                                   event_sink& events, variant v, store_limits limits)
    : rank_(rank),
      ledger_(ledger),
      events_(events),
      variant_(v),
      jobs_(rank, ledger, store, events, v, limits) {}

void running_requests::emit(event_body body) { events_.emit_built(event{rank_, std::move(body)}); }

bool running_requests::adopt(room_key key, std::vector<page_index> pages) {
  owner_.check();
  if (running_.contains(key)) {
    emit(running_call_refused{key, running_refusal::already_running});
    return false;
  }
  const bool owned = !pages.empty() && std::all_of(pages.begin(), pages.end(), [&](page_index p) {
    return ledger_.owner_of(p) == key && !ledger_.is_retiring(p);
  });
  if (!owned) {
    emit(running_call_refused{key, running_refusal::pages_not_owned});
    return false;
  }
  emit(request_running{key, pages, false});
  running_.emplace(key, std::move(pages));
  return true;
}

std::optional<std::vector<page_index>> running_requests::resume(room_key key, std::uint32_t pages) {
  owner_.check();
  if (running_.contains(key)) {
    emit(running_call_refused{key, running_refusal::already_running});
    return std::nullopt;
  }
  auto allocated = ledger_.allocate(key, pages);
  if (!allocated) return std::nullopt;  // back-pressure (or misuse), as the ledger reported
  emit(request_running{key, allocated.value(), true});
  return running_.emplace(key, allocated.value()).first->second;
}

std::optional<store_job_id> running_requests::store(room_key key) {
  owner_.check();
  const auto it = running_.find(key);
  if (it == running_.end()) {
    emit(running_call_refused{key, running_refusal::not_running});
    return std::nullopt;
  }
  if (!jobs_.can_store()) {
    emit(running_call_refused{key, running_refusal::no_store_engine});
    return std::nullopt;
  }
  return jobs_.start(key, it->second);
}

void running_requests::on_store_done(store_job_id job, room_key owner, bool stored) {
  owner_.check();
  jobs_.on_done(job, owner, stored);
}

void running_requests::preempt(room_key key) {
  owner_.check();
  if (!running_.contains(key)) {
    emit(running_call_refused{key, running_refusal::not_running});
    return;
  }
  // Historical (B14): the preemption path reset the connector's store tracker; nothing kept
  // the pages for the jobs still queued or copying, so the release below frees them at once.
  if (variant_.has(bug::b14_preempt_drops_store)) jobs_.abandon_jobs_of(key);
  end(key, running_end::preempted, request_outcome::preempted);
}

void running_requests::finish(room_key key) {
  owner_.check();
  if (!running_.contains(key)) {
    emit(running_call_refused{key, running_refusal::not_running});
    return;
  }
  end(key, running_end::finished, request_outcome::succeeded);
}

void running_requests::end(room_key key, running_end how, request_outcome outcome) {
  auto node = running_.extract(key);
  const std::vector<page_index>& pages = node.mapped();
  const auto deferred = static_cast<std::uint32_t>(std::count_if(
      pages.begin(), pages.end(), [&](page_index p) { return ledger_.lease_count(p) > 0; }));
  emit(running_request_ended{key, how, static_cast<std::uint32_t>(pages.size()), deferred});
  (void)ledger_.release(key, pages);
  emit(request_finished{key, outcome});
}

std::vector<std::string> running_requests::held() const {
  std::vector<std::string> lines = jobs_.held();
  for (const auto& [key, pages] : running_) {
    lines.push_back(to_string(key) + " still running on " + pages_text(pages));
  }
  return lines;
}

std::vector<std::string> running_requests::check_consistency() const {
  std::vector<std::string> problems = jobs_.check_consistency();
  for (const auto& [key, pages] : running_) {
    for (page_index page : pages) {
      if (ledger_.owner_of(page) != key || ledger_.is_retiring(page)) {
        problems.push_back(to_string(key) + " runs on page " + std::to_string(page) +
                           ", which it does not hold");
      }
    }
  }
  return problems;
}

}  // namespace kvsim::core
