#include "properties/page_ownership.h"

#include <type_traits>
#include <variant>

namespace kvsim::properties {

// One ledger decision applied to one rank's view. Decisions that are not the ledger's (room
// lifetimes, status, tokens) and refusals (allocation_refused, ledger_misuse) change no page.
struct page_ownership::replayer {
  rank_view& view;
  event_mark at;

  void operator()(const core::pages_allocated& e) const {
    for (core::page_index p : e.pages) {
      page_view& page = view.pages[p];
      page.owner = e.owner;
      page.retiring = false;
      page.last_allocated = ownership_change{at, e.owner};
    }
  }
  void operator()(const core::lease_started& e) const {
    view.leases.insert_or_assign(e.lease, lease_view{e.owner, e.role, e.pages, false, at, {}});
    for (core::page_index p : e.pages) view.pages[p].leases.insert(e.lease);
  }
  void operator()(const core::lease_quarantined& e) const {
    auto it = view.leases.find(e.lease);
    if (it == view.leases.end()) {
      // Never saw it start (a log that begins mid-run): take the event's word for it.
      it = view.leases
               .emplace(e.lease,
                        lease_view{e.owner, core::lease_role::source, e.pages, false, at, {}})
               .first;
      for (core::page_index p : e.pages) view.pages[p].leases.insert(e.lease);
    }
    it->second.quarantined = true;
    it->second.quarantined_at = at;
  }
  void operator()(const core::lease_ended& e) const { finish(e.lease, e.pages); }
  void operator()(const core::quarantine_confirmed& e) const { finish(e.lease, e.pages); }
  void operator()(const core::release_requested& e) const {
    // freed_now pages are freed by the page_freed events that follow; only retiring is news.
    for (core::page_index p : e.deferred) view.pages[p].retiring = true;
  }
  void operator()(const core::page_freed& e) const {
    page_view& page = view.pages[e.page];
    page.owner.reset();
    page.retiring = false;
    page.last_freed = ownership_change{at, e.owner};
    // Leases stay: a ledger that frees a leased page (DOMAIN.md B1/B3) leaves them dangling,
    // and the checkers must see exactly that.
  }
  template <class Other>
  void operator()(const Other&) const {}

  void finish(core::lease_id lease, const std::vector<core::page_index>& pages) const {
    if (auto it = view.leases.find(lease); it != view.leases.end()) {
      for (core::page_index p : it->second.pages) view.pages[p].leases.erase(lease);
      view.leases.erase(it);
    }
    for (core::page_index p : pages) view.pages[p].leases.erase(lease);
  }
};

namespace {

bool is_ledger_event(const core::event_body& body) {
  return std::visit(
      [](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        return std::is_same_v<T, core::pages_allocated> || std::is_same_v<T, core::lease_started> ||
               std::is_same_v<T, core::lease_ended> || std::is_same_v<T, core::lease_quarantined> ||
               std::is_same_v<T, core::quarantine_confirmed> ||
               std::is_same_v<T, core::release_requested> || std::is_same_v<T, core::page_freed>;
      },
      body);
}

}  // namespace

sim::event_kinds page_ownership::kinds() {
  return sim::event_kinds::of<core::pages_allocated, core::lease_started, core::lease_ended,
                              core::lease_quarantined, core::quarantine_confirmed,
                              core::release_requested, core::page_freed>();
}

void page_ownership::observe(const sim::sim_event& e, std::size_t index) {
  if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
    apply(decided->what, event_mark{e.step, index});
  }
}

void page_ownership::apply(const core::event& e, event_mark at) {
  // Only ledger decisions create a rank's view, so ranks() lists ranks that have pages.
  if (!is_ledger_event(e.body)) return;
  std::visit(replayer{ranks_[e.rank], at}, e.body);
}

const page_view& page_ownership::page(core::rank_id rank, core::page_index page) const {
  const auto r = ranks_.find(rank);
  if (r == ranks_.end()) return never_named_;
  const auto p = r->second.pages.find(page);
  return p == r->second.pages.end() ? never_named_ : (*p).second;
}

std::optional<core::room_key> page_ownership::owner_of(core::rank_id rank,
                                                       core::page_index page) const {
  return this->page(rank, page).owner;
}

}  // namespace kvsim::properties
