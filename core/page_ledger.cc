#include "core/page_ledger.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/invariant.h"

namespace kvsim::core {

page_ledger::page_ledger(rank_id rank, std::uint32_t pages_total, event_sink& sink,
                         ledger_options options)
    : rank_(rank), sink_(sink), options_(options), pages_(pages_total) {
  // Both orders hand out page 0 first on a fresh pool, so scenarios read the same either way.
  for (page_index page = 0; page < pages_total; ++page) {
    if (options_.order == allocation_order::lifo) {
      free_list_.push_front(page);
    } else {
      free_list_.push_back(page);
    }
  }
}

result<std::vector<page_index>, ledger_error> page_ledger::allocate(room_key owner,
                                                                    std::uint32_t count) {
  if (count == 0) {
    refuse(ledger_error::empty_request, owner, std::nullopt, std::nullopt);
    return ledger_error::empty_request;
  }
  if (count > free_count()) {
    emit(allocation_refused{owner, count, free_count()});
    return ledger_error::not_enough_free_pages;
  }
  std::vector<page_index> taken;
  taken.reserve(count);
  page_set& owned = owned_by_[owner];
  owned.reserve(owned.size() + count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const page_index page = take_free_page();
    pages_[page].owner = owner;
    owned.add(page);
    taken.push_back(page);
  }
  emit(pages_allocated{owner, taken});
  return taken;
}

result<std::vector<page_index>, ledger_error> page_ledger::allocate_exact(
    room_key owner, std::span<const page_index> pages) {
  std::optional<page_index> culprit;
  if (auto error = validate_page_list(pages, culprit)) {
    refuse(*error, owner, culprit, std::nullopt);
    return *error;
  }
  // Retiring and quarantined pages still have their owner: one test covers all three.
  for (page_index page : pages) {
    if (pages_[page].owner) {
      refuse(ledger_error::page_not_free, owner, page, std::nullopt);
      return ledger_error::page_not_free;
    }
  }
  take_free_pages(pages);
  std::vector<page_index> taken(pages.begin(), pages.end());
  page_set& owned = owned_by_[owner];
  owned.reserve(owned.size() + taken.size());
  for (page_index page : taken) {
    pages_[page].owner = owner;
    owned.add(page);
  }
  emit(pages_allocated{owner, taken, /*exact=*/true});
  return taken;
}

result<lease_id, ledger_error> page_ledger::lease(room_key owner, lease_role role,
                                                  std::span<const page_index> pages) {
  std::optional<page_index> culprit;
  if (auto error = validate_page_list(pages, culprit)) {
    refuse(*error, owner, culprit, std::nullopt);
    return *error;
  }
  if (auto error = ownership_error(owner, pages, ledger_error::page_not_owned,
                                   ledger_error::page_retiring, culprit)) {
    refuse(*error, owner, culprit, std::nullopt);
    return *error;
  }
  const lease_id id = next_lease_++;
  for (page_index page : pages) ++pages_[page].leases;
  std::vector<page_index> leased(pages.begin(), pages.end());
  leases_.emplace(id, lease_record{owner, role, leased, false});
  emit(lease_started{id, owner, role, std::move(leased)});
  return id;
}

status<ledger_error> page_ledger::end_lease(lease_id lease) {
  if (auto error = lease_call_error(lease, false, ledger_error::lease_quarantined)) {
    return refuse_lease_call(*error, lease);
  }
  finish_lease(lease);
  return done{};
}

status<ledger_error> page_ledger::quarantine(lease_id lease) {
  if (auto error = lease_call_error(lease, false, ledger_error::lease_quarantined)) {
    return refuse_lease_call(*error, lease);
  }
  lease_record& record = leases_.at(lease);
  record.quarantined = true;
  for (page_index page : record.pages) ++pages_[page].quarantined_leases;
  emit(lease_quarantined{lease, record.owner, record.pages});
  return done{};
}

status<ledger_error> page_ledger::confirm_quarantine(lease_id lease) {
  if (auto error = lease_call_error(lease, true, ledger_error::lease_not_quarantined)) {
    return refuse_lease_call(*error, lease);
  }
  finish_lease(lease);
  return done{};
}

status<ledger_error> page_ledger::release(room_key owner, std::span<const page_index> pages) {
  std::optional<page_index> culprit;
  if (auto error = validate_page_list(pages, culprit)) {
    refuse(*error, owner, culprit, std::nullopt);
    return *error;
  }
  if (auto error = ownership_error(owner, pages, ledger_error::double_release,
                                   ledger_error::double_release, culprit)) {
    refuse(*error, owner, culprit, std::nullopt);
    return *error;
  }
  release_requested decision{owner, {}, {}};
  for (page_index page : pages) {
    const bool defer = pages_[page].leases > 0 &&
                       options_.release == release_policy::defer_while_leased;
    (defer ? decision.deferred : decision.freed_now).push_back(page);
  }
  for (page_index page : decision.deferred) pages_[page].retiring = true;
  const std::vector<page_index> freed_now = decision.freed_now;
  emit(std::move(decision));
  for (page_index page : freed_now) free_page(page);
  return done{};
}

status<ledger_error> page_ledger::release_all(room_key owner) {
  std::vector<page_index> pages;
  if (const auto owned = owned_by_.find(owner); owned != owned_by_.end()) {
    for (page_index page : owned->second) {
      if (!pages_[page].retiring) pages.push_back(page);
    }
  }
  if (pages.empty()) return done{};
  return release(owner, pages);
}

std::uint32_t page_ledger::owned_count() const {
  return static_cast<std::uint32_t>(std::count_if(pages_.begin(), pages_.end(), [](const auto& p) {
    return p.owner.has_value() && !p.retiring;
  }));
}

std::uint32_t page_ledger::retiring_count() const {
  return static_cast<std::uint32_t>(
      std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p.retiring; }));
}

std::uint32_t page_ledger::leased_page_count() const {
  return static_cast<std::uint32_t>(
      std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p.leases > 0; }));
}

std::uint32_t page_ledger::quarantined_page_count() const {
  return static_cast<std::uint32_t>(std::count_if(
      pages_.begin(), pages_.end(), [](const auto& p) { return p.quarantined_leases > 0; }));
}

std::optional<room_key> page_ledger::owner_of(page_index page) const {
  if (page >= pages_total()) return std::nullopt;
  return pages_[page].owner;
}

std::uint32_t page_ledger::lease_count(page_index page) const {
  return page < pages_total() ? pages_[page].leases : 0;
}

bool page_ledger::is_retiring(page_index page) const {
  return page < pages_total() && pages_[page].retiring;
}

std::vector<page_index> page_ledger::pages_of(room_key owner) const {
  const auto owned = owned_by_.find(owner);
  if (owned == owned_by_.end()) return {};
  return {owned->second.begin(), owned->second.end()};
}

std::vector<std::string> page_ledger::check_consistency() const {
  std::vector<std::string> problems;
  std::vector<std::uint32_t> free_list_hits(pages_.size(), 0);
  for (page_index page : free_list_) {
    if (page >= pages_total()) {
      problems.push_back("free list holds out-of-range page " + std::to_string(page));
      continue;
    }
    ++free_list_hits[page];
  }
  std::vector<std::uint32_t> leases_seen(pages_.size(), 0);
  std::vector<std::uint32_t> quarantined_seen(pages_.size(), 0);
  for (const auto& [id, record] : leases_) {
    for (page_index page : record.pages) {
      ++leases_seen[page];
      if (record.quarantined) ++quarantined_seen[page];
      // DOMAIN.md I1 at the ledger: a leased page belongs to the lease's owner, nobody else.
      const auto& owner = pages_[page].owner;
      if (owner && *owner != record.owner) {
        problems.push_back("page " + std::to_string(page) + " is owned by " + to_string(*owner) +
                           " while lease " + std::to_string(id) + " of " +
                           to_string(record.owner) + " still references it");
      }
    }
  }
  for (page_index page = 0; page < pages_total(); ++page) {
    const page_record& record = pages_[page];
    const std::string name = "page " + std::to_string(page);
    const bool is_free = !record.owner.has_value();
    if (free_list_hits[page] > 1) problems.push_back(name + " is on the free list twice");
    if (is_free && free_list_hits[page] == 0) problems.push_back(name + " is free but not listed");
    if (!is_free && free_list_hits[page] > 0) problems.push_back(name + " is owned but listed free");
    if (is_free && record.leases > 0) {
      problems.push_back(name + " is free while " + std::to_string(record.leases) +
                         " lease(s) still reference it");
    }
    if (is_free && record.retiring) problems.push_back(name + " is free but marked retiring");
    if (record.retiring && record.leases == 0) {
      problems.push_back(name + " is retiring with no lease left (should have been freed)");
    }
    if (record.leases != leases_seen[page]) {
      problems.push_back(name + " counts " + std::to_string(record.leases) + " leases, " +
                         std::to_string(leases_seen[page]) + " active leases name it");
    }
    if (record.quarantined_leases != quarantined_seen[page]) {
      problems.push_back(name + " counts " + std::to_string(record.quarantined_leases) +
                         " quarantined leases, " + std::to_string(quarantined_seen[page]) +
                         " quarantined leases name it");
    }
    if (record.owner) {
      const auto owned = owned_by_.find(*record.owner);
      if (owned == owned_by_.end() ||
          !std::binary_search(owned->second.begin(), owned->second.end(), page)) {
        problems.push_back(name + " is owned by " + to_string(*record.owner) +
                           " but missing from its owner's index");
      }
    }
  }
  // The per-owner index holds exactly the owned pages, and no owner that holds none (an
  // empty entry per finished request is memory that grows with the requests ever served).
  for (const auto& [owner, pages] : owned_by_) {
    if (pages.empty()) problems.push_back(to_string(owner) + " indexed with no page");
    for (page_index page : pages) {
      if (page >= pages_total() || pages_[page].owner != owner) {
        problems.push_back(to_string(owner) + " indexes page " + std::to_string(page) +
                           ", which it does not own");
      }
    }
  }
  return problems;
}

std::optional<ledger_error> page_ledger::validate_page_list(
    std::span<const page_index> pages, std::optional<page_index>& culprit) const {
  if (pages.empty()) return ledger_error::empty_request;
  // The request's own pages, not a pool-sized bitmap. A request names a few pages: up to
  // short_list_pages each is compared with those before it (no allocation at every lease and
  // release); a longer list keeps a set, O(k log k). Either way the culprit is the first page,
  // in the list's order, that is out of range or repeats an earlier one.
  constexpr std::size_t short_list_pages = 32;
  std::set<page_index> seen;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const page_index page = pages[i];
    culprit = page;
    if (page >= pages_total()) return ledger_error::page_out_of_range;
    const bool repeated = pages.size() <= short_list_pages
                              ? std::find(pages.begin(), pages.begin() + static_cast<std::ptrdiff_t>(i),
                                          page) != pages.begin() + static_cast<std::ptrdiff_t>(i)
                              : !seen.insert(page).second;
    if (repeated) return ledger_error::duplicate_page;
  }
  culprit.reset();
  return std::nullopt;
}

std::optional<ledger_error> page_ledger::ownership_error(room_key owner,
                                                     std::span<const page_index> pages,
                                                     ledger_error if_free,
                                                     ledger_error if_retiring,
                                                     std::optional<page_index>& culprit) const {
  for (page_index page : pages) {
    culprit = page;
    const page_record& record = pages_[page];
    if (!record.owner) return if_free;
    if (*record.owner != owner) return ledger_error::not_owner;
    if (record.retiring) return if_retiring;
  }
  culprit.reset();
  return std::nullopt;
}

std::optional<ledger_error> page_ledger::lease_call_error(lease_id lease, bool wants_quarantined,
                                                          ledger_error wrong_state) const {
  if (lease == 0 || lease >= next_lease_) return ledger_error::unknown_lease;
  const auto it = leases_.find(lease);
  if (it == leases_.end()) return ledger_error::lease_underflow;
  if (it->second.quarantined != wants_quarantined) return wrong_state;
  return std::nullopt;
}

status<ledger_error> page_ledger::refuse_lease_call(ledger_error error, lease_id lease) {
  const auto it = leases_.find(lease);
  refuse(error, it == leases_.end() ? room_key{} : it->second.owner, std::nullopt, lease);
  return error;
}

void page_ledger::finish_lease(lease_id lease) {
  auto node = leases_.extract(lease);
  KVSIM_INVARIANT(!node.empty(), "finish_lease on a lease that is not live");
  const lease_record& record = node.mapped();
  for (page_index page : record.pages) {
    page_record& page_state = pages_[page];
    KVSIM_INVARIANT(page_state.leases > 0, "lease count underflow on a live lease's page");
    --page_state.leases;
    if (record.quarantined) --page_state.quarantined_leases;
  }
  if (record.quarantined) {
    emit(quarantine_confirmed{lease, record.owner, record.pages});
  } else {
    emit(lease_ended{lease, record.owner, record.pages});
  }
  for (page_index page : record.pages) {
    if (pages_[page].retiring && pages_[page].leases == 0) free_page(page);
  }
}

void page_ledger::free_page(page_index page) {
  page_record& record = pages_[page];
  KVSIM_INVARIANT(record.owner.has_value(), "freeing a page that has no owner");
  const room_key previous_owner = *record.owner;
  const auto owned = owned_by_.find(previous_owner);
  KVSIM_INVARIANT(owned != owned_by_.end(), "a page being freed is in its owner's index");
  owned->second.remove(page);
  if (owned->second.empty()) owned_by_.erase(owned);
  record.owner.reset();
  record.retiring = false;
  free_list_.push_back(page);
  emit(page_freed{previous_owner, page});
}

page_index page_ledger::take_free_page() {
  KVSIM_INVARIANT(!free_list_.empty(), "take_free_page on an empty free list");
  page_index page = 0;
  if (options_.order == allocation_order::lifo) {
    page = free_list_.back();
    free_list_.pop_back();
  } else {
    page = free_list_.front();
    free_list_.pop_front();
  }
  return page;
}

void page_ledger::take_free_pages(std::span<const page_index> pages) {
  // The request's own pages, not a pool-sized bitmap (validate_page_list's rule); one pass
  // over the free list keeps the order of the pages that stay on it.
  const std::set<page_index> wanted(pages.begin(), pages.end());
  const std::size_t removed =
      std::erase_if(free_list_, [&](page_index page) { return wanted.contains(page); });
  KVSIM_INVARIANT(removed == wanted.size(), "every page without an owner is on the free list");
}

void page_ledger::refuse(ledger_error error, room_key caller, std::optional<page_index> page,
                         std::optional<lease_id> lease) {
  emit(ledger_misuse{error, caller, page, lease});
}

void page_ledger::emit(event_body body) { sink_.emit_built(event{rank_, std::move(body)}); }

}  // namespace kvsim::core
