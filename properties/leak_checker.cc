#include "properties/leak_checker.h"

#include <algorithm>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kvsim::properties {
namespace {

// "1 active lease" / "2 active leases".
std::string count_text(std::size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "lease 5 of room 7/gen 0, lease 6 of room 7/gen 0"
std::string leases_text(const std::vector<std::pair<core::lease_id, core::room_key>>& leases) {
  std::string text;
  for (const auto& [id, owner] : leases) {
    if (!text.empty()) text += ", ";
    text += "lease " + std::to_string(id) + " of " + core::to_string(owner);
  }
  return text;
}

// Joins parts as "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& parts) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) text += i + 1 == parts.size() ? " and " : ", ";
    text += parts[i];
  }
  return text;
}

std::string page_detail(core::rank_id rank, core::page_index p, const page_view& page) {
  std::string text = "rank " + std::to_string(rank) + " page " + std::to_string(p) + " of " +
                     core::to_string(*page.owner);
  if (page.last_allocated)
    text += ", allocated at step " + std::to_string(page.last_allocated->at.step);
  if (page.retiring) {
    return text + ", release requested, waiting for " + count_text(page.leases.size(), "lease");
  }
  return text + ", never released";
}

std::string lease_detail(core::rank_id rank, core::lease_id id, const lease_view& lease) {
  std::string text = "rank " + std::to_string(rank) + " lease " + std::to_string(id) + " of " +
                     core::to_string(lease.owner) + " (" + core::to_string(lease.role) + " " +
                     pages_text(lease.pages) + "), started at step " +
                     std::to_string(lease.started.step);
  if (lease.quarantined_at) {
    return text + ", quarantined at step " + std::to_string(lease.quarantined_at->step) +
           ", never confirmed";
  }
  return text + ", never ended";
}

struct rank_leak {
  std::string summary;  // "rank 1 still holds ..."; empty when the rank is clean
  std::vector<std::string> details;
  std::vector<std::size_t> evidence;
};

rank_leak leak_of(core::rank_id rank, const rank_view& view) {
  rank_leak leak;
  std::map<core::room_key, std::vector<core::page_index>> owned;  // ordered: deterministic
  for (const auto& [p, page] : view.pages) {
    if (!page.owner) continue;
    owned[*page.owner].push_back(p);
    leak.details.push_back(page_detail(rank, p, page));
    if (page.last_allocated) leak.evidence.push_back(page.last_allocated->at.index);
  }
  std::vector<std::pair<core::lease_id, core::room_key>> active;
  std::vector<std::pair<core::lease_id, core::room_key>> quarantined;
  for (const auto& [id, lease] : view.leases) {
    (lease.quarantined ? quarantined : active).emplace_back(id, lease.owner);
    leak.details.push_back(lease_detail(rank, id, lease));
    leak.evidence.push_back(lease.started.index);
  }
  std::vector<std::string> parts;
  for (const auto& [owner, pages] : owned) {
    parts.push_back(std::to_string(pages.size()) + " page(s) of " + core::to_string(owner) + " " +
                    pages_text(pages));
  }
  if (!active.empty()) {
    parts.push_back(count_text(active.size(), "active lease") + " (" + leases_text(active) + ")");
  }
  if (!quarantined.empty()) {
    parts.push_back(count_text(quarantined.size(), "quarantined lease") + " (" +
                    leases_text(quarantined) + ")");
  }
  if (!parts.empty())
    leak.summary = "rank " + std::to_string(rank) + " still holds " + join_and(parts);
  return leak;
}

}  // namespace

// The ledger's decisions only to replay them: a shared replay is fed by its own feed.
sim::event_kinds leak_checker::subscriptions() const {
  return (ownership_.shared() ? sim::event_kinds{} : page_ownership::kinds()) |
         sim::event_kinds::of<sim::rank_stopped, sim::core_audited>();
}

std::optional<sim::finding> leak_checker::observe(const sim::sim_event& e, std::size_t index) {
  if (const auto* stopped = std::get_if<sim::rank_stopped>(&e.body)) stopped_.insert(stopped->rank);
  ownership_.observe(e, index);
  if (const auto* audit = std::get_if<sim::core_audited>(&e.body); audit && !audit->held.empty()) {
    held_.emplace_back(index, *audit);
  }
  return std::nullopt;
}

std::optional<sim::finding> leak_checker::at_quiescence() {
  sim::finding found{"I8", "I8: at quiescence ", {}, {}};
  bool first = true;
  for (const auto& [rank, view] : ownership_.view().ranks()) {
    if (stopped_.contains(rank)) continue;
    rank_leak leak = leak_of(rank, view);
    if (leak.summary.empty()) continue;
    found.message += (first ? "" : "; ") + leak.summary;
    first = false;
    found.details.insert(found.details.end(), leak.details.begin(), leak.details.end());
    found.evidence.insert(found.evidence.end(), leak.evidence.begin(), leak.evidence.end());
  }
  for (const auto& [index, audit] : held_) {
    if (stopped_.contains(audit.rank)) continue;  // a dead rank's memory went with it
    found.message += (first ? "" : "; ") + std::string("rank ") + std::to_string(audit.rank) +
                     "'s " + audit.component + " still holds " + audit.held.front() +
                     (audit.held.size() > 1 ? " (and " + std::to_string(audit.held.size() - 1) +
                                                  " more)"
                                            : "");
    first = false;
    for (const std::string& line : audit.held) {
      found.details.push_back("rank " + std::to_string(audit.rank) + " " + audit.component + ": " +
                              line);
    }
    found.evidence.push_back(index);
  }
  if (first) return std::nullopt;
  std::sort(found.evidence.begin(), found.evidence.end());
  found.evidence.erase(std::unique(found.evidence.begin(), found.evidence.end()),
                       found.evidence.end());
  return found;
}

}  // namespace kvsim::properties
