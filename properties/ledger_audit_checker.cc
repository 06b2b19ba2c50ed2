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

std::optional<sim::finding> ledger_audit_checker::observe(const sim::sim_event& e,
                                                          std::size_t index) {
  ownership_.observe(e, index);
  if (const auto* audit = std::get_if<sim::ledger_audited>(&e.body)) return compare(*audit, index);
  return std::nullopt;
}

std::optional<sim::finding> ledger_audit_checker::compare(const sim::ledger_audited& audit,
                                                          std::size_t index) const {
  static const rank_view no_events;
  const auto it = ownership_.ranks().find(audit.rank);
  const rank_view& view = it != ownership_.ranks().end() ? it->second : no_events;
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
  if (problems.empty()) return std::nullopt;
  sim::finding found{"I8",
                     "I8: at quiescence rank " + std::to_string(audit.rank) +
                         "'s ledger disagrees with its own events: " + problems.front(),
                     {index},
                     problems};
  return found;
}

}  // namespace kvsim::properties
