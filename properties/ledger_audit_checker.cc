#include "properties/ledger_audit_checker.h"

#include <algorithm>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kvsim::properties {
namespace {

// What the replayed events say one rank's ledger should report.
struct expected_books {
  std::uint32_t owned = 0;  // owned and not retiring
  std::uint32_t retiring = 0;
  std::uint32_t leased = 0;
  std::uint32_t quarantined = 0;
  std::uint32_t held = 0;  // every page with an owner
  std::map<core::room_key, std::vector<core::page_index>> pages_of;
};

expected_books books_of(const rank_view& view) {
  expected_books books;
  for (const auto& [page, p] : view.pages) {
    if (!p.owner) continue;
    ++books.held;
    ++(p.retiring ? books.retiring : books.owned);
    books.pages_of[*p.owner].push_back(page);
    if (!p.leases.empty()) ++books.leased;
    for (const core::lease_id id : p.leases) {
      const auto lease = view.leases.find(id);
      if (lease != view.leases.end() && lease->second.quarantined) {
        ++books.quarantined;
        break;
      }
    }
  }
  return books;
}

void compare_count(std::vector<std::string>& problems, const char* what, std::uint32_t reported,
                   std::uint32_t replayed) {
  if (reported == replayed) return;
  problems.push_back(std::string(what) + " " + std::to_string(reported) + ", the events say " +
                     std::to_string(replayed));
}

}  // namespace

// check_decision reads allocations, frees and lease ends (all of them page_ownership's kinds);
// the other ledger decisions only to replay them, which a shared replay's feed does.
sim::event_kinds ledger_audit_checker::subscriptions() const {
  const sim::event_kinds judged = sim::event_kinds::of<core::pages_allocated, core::page_freed,
                                                       core::lease_ended, core::quarantine_confirmed>();
  return (ownership_.shared() ? judged : page_ownership::kinds()) |
         sim::event_kinds::of<sim::ledger_created, sim::ledger_audited>();
}

std::optional<sim::finding> ledger_audit_checker::observe(const sim::sim_event& e,
                                                          std::size_t index) {
  if (const auto* created = std::get_if<sim::ledger_created>(&e.body)) {
    free_lists_[created->rank].emplace(created->pages_total, created->order);
    return std::nullopt;
  }
  std::optional<sim::finding> found;
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    found = check_decision(decided->what, e.step, index);
  }
  ownership_.observe(e, index);
  if (found) return found;
  if (const auto* audit = std::get_if<sim::ledger_audited>(&e.body)) {
    return compare(*audit, e.step, index);
  }
  return std::nullopt;
}

std::optional<sim::finding> ledger_audit_checker::check_decision(const core::event& e,
                                                                 std::uint64_t step,
                                                                 std::size_t index) {
  // Words only for a finding: this runs at every ledger decision.
  const auto books = [&](const std::string& what) {
    return sim::finding{"I8",
                        "I8: rank " + std::to_string(e.rank) + " at step " + std::to_string(step) +
                            ": " + what,
                        {index},
                        {}};
  };
  const auto slot = free_lists_.find(e.rank);
  free_list_replay* const list =
      slot != free_lists_.end() && (*slot).second ? &*(*slot).second : nullptr;
  if (const auto* allocated = std::get_if<core::pages_allocated>(&e.body);
      allocated != nullptr && list != nullptr) {
    // Pages the caller named (a pin) need only have been free: the books below and the
    // other checkers judge that; the list still drops them, so later allocations are judged.
    const bool in_order = allocated->exact || list->hands_out(allocated->pages);
    const std::vector<core::page_index> expected =
        in_order ? std::vector<core::page_index>{}
                 : list->next(static_cast<std::uint32_t>(allocated->pages.size()));
    list->taken(allocated->pages);
    if (!in_order) {
      return books("the ledger handed " + core::to_string(allocated->owner) + " pages " +
                   pages_text(allocated->pages) + ", its free list hands out " +
                   pages_text(expected) + " next");
    }
  }
  if (const auto* freed = std::get_if<core::page_freed>(&e.body);
      freed != nullptr && list != nullptr) {
    list->freed(freed->page);
  }
  const auto lease_was_quarantined = [&](core::lease_id lease) -> std::optional<bool> {
    const auto rank = ownership_.view().ranks().find(e.rank);
    if (rank == ownership_.view().ranks().end()) return std::nullopt;
    const auto it = rank->second.leases.find(lease);
    if (it == rank->second.leases.end()) return std::nullopt;
    return it->second.quarantined;
  };
  if (const auto* ended = std::get_if<core::lease_ended>(&e.body)) {
    if (lease_was_quarantined(ended->lease) == true) {
      return books("lease " + std::to_string(ended->lease) +
                   " ended plainly, but it was quarantined: only the transport's confirmation "
                   "may end it");
    }
  }
  if (const auto* confirmed = std::get_if<core::quarantine_confirmed>(&e.body)) {
    if (lease_was_quarantined(confirmed->lease) == false) {
      return books("lease " + std::to_string(confirmed->lease) +
                   " ended as a confirmed quarantine, but it was never quarantined");
    }
  }
  return std::nullopt;
}

std::optional<sim::finding> ledger_audit_checker::compare(const sim::ledger_audited& audit,
                                                          std::uint64_t step,
                                                          std::size_t index) const {
  static const rank_view no_events;
  const auto it = ownership_.view().ranks().find(audit.rank);
  const rank_view& view = it != ownership_.view().ranks().end() ? it->second : no_events;
  const expected_books books = books_of(view);
  std::vector<std::string> problems = audit.inconsistencies;
  compare_count(problems, "free pages", audit.free_pages, audit.pages_total - books.held);
  compare_count(problems, "owned pages", audit.owned_pages, books.owned);
  compare_count(problems, "retiring pages", audit.retiring_pages, books.retiring);
  compare_count(problems, "leased pages", audit.leased_pages, books.leased);
  compare_count(problems, "quarantined pages", audit.quarantined_pages, books.quarantined);
  compare_count(problems, "active leases", audit.active_leases,
                static_cast<std::uint32_t>(view.leases.size()));
  std::map<core::page_index, const sim::ledger_audited::owned_page*> reported;
  for (const auto& page : audit.owned) reported[page.page] = &page;
  for (const auto& [page, p] : view.pages) {
    if (!p.owner) continue;
    const auto found = reported.find(page);
    if (found == reported.end()) {
      problems.push_back("page " + std::to_string(page) + " reported free, the events say " +
                         core::to_string(*p.owner) + " owns it");
      continue;
    }
    const sim::ledger_audited::owned_page& r = *found->second;
    if (r.owner != *p.owner) {
      problems.push_back("page " + std::to_string(page) + " reported owned by " +
                         core::to_string(r.owner) + ", the events say " +
                         core::to_string(*p.owner));
    }
    if (r.leases != p.leases.size()) {
      problems.push_back("page " + std::to_string(page) + " reported with " +
                         std::to_string(r.leases) + " lease(s), the events say " +
                         std::to_string(p.leases.size()));
    }
    if (r.retiring != p.retiring) {
      problems.push_back("page " + std::to_string(page) + " reported " +
                         (r.retiring ? "retiring" : "not retiring") + ", the events say " +
                         (p.retiring ? "retiring" : "not retiring"));
    }
    reported.erase(found);
  }
  for (const auto& [page, r] : reported) {
    problems.push_back("page " + std::to_string(page) + " reported owned by " +
                       core::to_string(r->owner) + ", the events say it is free");
  }
  for (const auto& [owner, pages] : audit.pages_of) {
    const auto expected = books.pages_of.find(owner);
    const std::vector<core::page_index> replayed =
        expected != books.pages_of.end() ? expected->second : std::vector<core::page_index>{};
    std::vector<core::page_index> sorted = pages;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != replayed) {
      problems.push_back("pages of " + core::to_string(owner) + " reported " + pages_text(sorted) +
                         ", the events say " + pages_text(replayed));
    }
  }
  for (const auto& beyond : audit.beyond_pool) {
    if (beyond.owner || beyond.leases != 0 || beyond.retiring) {
      problems.push_back("page " + std::to_string(beyond.page) + ", past the pool of " +
                         std::to_string(audit.pages_total) + ", reported " +
                         (beyond.owner ? "owned by " + core::to_string(*beyond.owner) : "free") +
                         " with " + std::to_string(beyond.leases) + " lease(s)" +
                         (beyond.retiring ? ", retiring" : ""));
    }
  }
  if (problems.empty()) return std::nullopt;
  sim::finding found{"I8",
                     "I8: at step " + std::to_string(step) + " rank " + std::to_string(audit.rank) +
                         "'s ledger disagrees with its own events: " + problems.front(),
                     {index},
                     problems};
  return found;
}

}  // namespace kvsim::properties
