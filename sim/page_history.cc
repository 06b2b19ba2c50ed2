#include "sim/page_history.h"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "sim/transfer_id.h"

namespace kvsim::sim {
namespace {

using core::page_index;

bool names(const std::vector<page_index>& pages, page_index page) {
  return std::find(pages.begin(), pages.end(), page) != pages.end();
}

std::string room_text(const core::room_key& key) { return core::to_string(key); }

std::string transfer_text(transfer_id id, const core::room_key& owner) {
  return to_string(transfer_actor(id)) + " (" + room_text(owner) + ")";
}

// Core decisions about pages, on the deciding rank.
void add_core_pages(const core::event& decided, std::vector<page_ref>& out) {
  const auto add = [&](const std::vector<page_index>& pages, bool host) {
    for (const page_index p : pages) out.push_back({decided.rank, p, host});
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core::host_pages_allocated> ||
                      std::is_same_v<T, core::host_pages_freed>) {
          add(e.pages, true);
        } else if constexpr (std::is_same_v<T, core::release_requested>) {
          add(e.freed_now, false);
          add(e.deferred, false);
        } else if constexpr (std::is_same_v<T, core::page_freed>) {
          out.push_back({decided.rank, e.page, false});
        } else if constexpr (std::is_same_v<T, core::ledger_misuse>) {
          if (e.page) out.push_back({decided.rank, *e.page, false});
        } else if constexpr (requires { e.pages; }) {
          add(e.pages, false);  // allocations, leases, quarantines
        }
      },
      decided.body);
}

// Walks the log for one page, keeping what a reader needs to judge each moment: its owner,
// and the transfers and storage reads in flight.
class page_walk {
 public:
  explicit page_walk(page_ref page) : page_(page) {}

  void observe(const sim_event& e, std::size_t index) {
    index_ = index;
    std::visit([this](const auto& body) { on(body); }, e.body);
  }

  std::vector<page_moment> moments;

 private:
  void note(std::string what, ownership_change change = ownership_change::none,
            std::optional<core::room_key> owner = std::nullopt) {
    moments.push_back({index_, change, owner, std::move(what)});
  }

  bool here(core::rank_id rank, page_index page, bool host) const {
    return page_ == page_ref{rank, page, host};
  }
  bool here(core::rank_id rank, const std::vector<page_index>& pages, bool host) const {
    return page_.rank == rank && page_.host == host && names(pages, page_.page);
  }

  // Whose page it is while someone acting for `actor_for` touches it.
  std::string owner_note(const core::room_key& actor_for) const {
    if (!owner_) return " while it is free";
    if (*owner_ != actor_for) return " while " + room_text(*owner_) + " owns it";
    return "";
  }

  std::string in_flight_note() const {
    std::vector<std::string> running;
    for (const auto& [id, t] : transfers_) {
      if (here(t.source_rank, t.source_pages, false) ||
          here(t.destination_rank, t.destination_pages, false)) {
        running.push_back(transfer_text(id, t.owner));
      }
    }
    for (const auto& [key, read] : reads_) {
      if (here(read.rank, read.host_pages, true)) {
        running.push_back("storage read " + std::to_string(read.read) + " (" +
                          room_text(read.owner) + ")");
      }
    }
    if (running.empty()) return "";
    std::string text = " while ";
    for (std::size_t i = 0; i < running.size(); ++i) text += (i ? ", " : "") + running[i];
    return text + " in flight";
  }

  void on(const core_decided& d) {
    const core::rank_id rank = d.what.rank;
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, core::pages_allocated>) {
            if (!here(rank, e.pages, false)) return;
            owner_ = e.owner;
            note("allocated to " + room_text(e.owner), ownership_change::acquired, e.owner);
          } else if constexpr (std::is_same_v<T, core::lease_started>) {
            if (here(rank, e.pages, false)) {
              note("leased by " + room_text(e.owner) + " as " + core::to_string(e.role) +
                   " (lease " + std::to_string(e.lease) + ")" + owner_note(e.owner));
            }
          } else if constexpr (std::is_same_v<T, core::lease_ended>) {
            if (here(rank, e.pages, false)) {
              note("lease " + std::to_string(e.lease) + " of " + room_text(e.owner) + " ended");
            }
          } else if constexpr (std::is_same_v<T, core::lease_quarantined>) {
            if (here(rank, e.pages, false)) {
              note("lease " + std::to_string(e.lease) + " of " + room_text(e.owner) +
                   " quarantined (its end is unconfirmed)");
            }
          } else if constexpr (std::is_same_v<T, core::quarantine_confirmed>) {
            if (here(rank, e.pages, false)) {
              note("quarantine of lease " + std::to_string(e.lease) + " (" + room_text(e.owner) +
                   ") confirmed");
            }
          } else if constexpr (std::is_same_v<T, core::release_requested>) {
            if (here(rank, e.freed_now, false)) {
              note(room_text(e.owner) + " releases it: freed now");
            } else if (here(rank, e.deferred, false)) {
              note(room_text(e.owner) + " releases it: deferred, still leased (retiring)");
            }
          } else if constexpr (std::is_same_v<T, core::page_freed>) {
            if (!here(rank, e.page, false)) return;
            owner_.reset();
            note("freed (was " + room_text(e.owner) + "'s)" + in_flight_note(),
                 ownership_change::released, e.owner);
          } else if constexpr (std::is_same_v<T, core::ledger_misuse>) {
            if (e.page && here(rank, *e.page, false)) {
              note(std::string("ledger refused a call of ") + room_text(e.caller) + ": " +
                   core::to_string(e.error));
            }
          } else if constexpr (std::is_same_v<T, core::host_pages_allocated>) {
            if (!here(rank, e.pages, true)) return;
            owner_ = e.key;
            note("allocated to " + room_text(e.key), ownership_change::acquired, e.key);
          } else if constexpr (std::is_same_v<T, core::host_pages_freed>) {
            if (!here(rank, e.pages, true)) return;
            // Whose it was, and for whom the free was meant when that is someone else.
            std::string what = "freed by the " + std::string(core::to_string(e.by));
            if (owner_ != e.key) what += " for " + room_text(e.key);
            what += owner_ ? " (was " + room_text(*owner_) + "'s)" : " (already free)";
            owner_.reset();
            note(what + in_flight_note(), ownership_change::released, e.key);
          }
        },
        d.what.body);
  }

  void on(const transfer_submitted& t) {
    transfers_[t.transfer] = t;
    for (std::size_t i = 0; i < t.source_pages.size() && i < t.destination_pages.size(); ++i) {
      if (here(t.source_rank, t.source_pages[i], false)) {
        note("source of " + transfer_text(t.transfer, t.owner) + ", to rank " +
             std::to_string(t.destination_rank) + " page " +
             std::to_string(t.destination_pages[i]) + owner_note(t.owner));
      }
      if (here(t.destination_rank, t.destination_pages[i], false)) {
        note("destination of " + transfer_text(t.transfer, t.owner) + ", from rank " +
             std::to_string(t.source_rank) + " page " + std::to_string(t.source_pages[i]) +
             owner_note(t.owner));
      }
    }
  }
  void on(const transfer_page_copied& c) {
    if (here(c.destination_rank, c.destination_page, false)) {
      note("written by " + transfer_text(c.transfer, c.owner) + " from rank " +
           std::to_string(c.source_rank) + " page " + std::to_string(c.source_page) +
           owner_note(c.owner));
    }
    if (here(c.source_rank, c.source_page, false)) {
      note("read by " + transfer_text(c.transfer, c.owner) + " for rank " +
           std::to_string(c.destination_rank) + " page " + std::to_string(c.destination_page) +
           owner_note(c.owner));
    }
  }
  void on(const transfer_ended& t) { transfers_.erase(t.transfer); }
  void on(const page_written& w) {
    if (here(w.rank, w.page, false)) {
      note("filled with " + room_text(w.writer) + "'s data (its page " +
           std::to_string(w.logical_page) + ")" + owner_note(w.writer));
    }
  }
  void on(const page_read& r) {
    if (!here(r.rank, r.page, false)) return;
    std::string what = "read by " + room_text(r.reader) + " (its page " +
                       std::to_string(r.logical_page) + "): ";
    if (r.intact) {
      what += "intact";
    } else {
      what += r.found ? "CORRUPT, holds " + room_text(*r.found) + "'s data" : "CORRUPT";
    }
    note(what);
  }
  void on(const storage_read_started& s) {
    reads_[{s.rank, s.read}] = s;
    if (here(s.rank, s.host_pages, true)) {
      note("storage read " + std::to_string(s.read) + " of " + room_text(s.owner) +
           " will write it" + owner_note(s.owner));
    }
  }
  void on(const storage_page_written& s) {
    if (here(s.rank, s.page, true)) {
      note("written by storage read " + std::to_string(s.read) + " (" + room_text(s.owner) +
           ", its page " + std::to_string(s.logical_page) + ")" + owner_note(s.owner));
    }
  }
  void on(const storage_read_ended& s) { reads_.erase({s.rank, s.read}); }
  void on(const misuse_attempted& m) {
    if (here(m.rank, m.pages, false)) {
      note(std::string("a careless caller's ") + to_string(m.call) + " for " +
           room_text(m.caller));
    }
  }
  template <class T>
  void on(const T&) {}

  page_ref page_;
  std::size_t index_ = 0;
  std::optional<core::room_key> owner_;
  std::map<transfer_id, transfer_submitted> transfers_;
  std::map<std::pair<core::rank_id, storage_read_id>, storage_read_started> reads_;
};

}  // namespace

std::string to_string(const page_ref& page) {
  return "rank " + std::to_string(page.rank) + (page.host ? " host page " : " page ") +
         std::to_string(page.page);
}

std::vector<page_ref> pages_named(const sim_event& e) {
  std::vector<page_ref> out;
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, core_decided>) {
          add_core_pages(body.what, out);
        } else if constexpr (std::is_same_v<T, transfer_submitted>) {
          for (const page_index p : body.source_pages) out.push_back({body.source_rank, p, false});
          for (const page_index p : body.destination_pages) {
            out.push_back({body.destination_rank, p, false});
          }
        } else if constexpr (std::is_same_v<T, transfer_page_copied>) {
          out.push_back({body.source_rank, body.source_page, false});
          out.push_back({body.destination_rank, body.destination_page, false});
        } else if constexpr (std::is_same_v<T, page_written> || std::is_same_v<T, page_read>) {
          out.push_back({body.rank, body.page, false});
        } else if constexpr (std::is_same_v<T, storage_read_started>) {
          for (const page_index p : body.host_pages) out.push_back({body.rank, p, true});
        } else if constexpr (std::is_same_v<T, storage_page_written>) {
          out.push_back({body.rank, body.page, true});
        } else if constexpr (std::is_same_v<T, misuse_attempted>) {
          for (const page_index p : body.pages) out.push_back({body.rank, p, false});
        }
      },
      e.body);
  return out;
}

std::vector<page_ref> finding_pages(const std::vector<sim_event>& events, const finding& found) {
  std::set<page_ref> pages;
  for (const std::size_t i : found.evidence) {
    if (i >= events.size()) continue;  // evidence of a log cut short
    for (const page_ref& p : pages_named(events[i])) pages.insert(p);
  }
  return {pages.begin(), pages.end()};
}

std::vector<page_moment> page_history(const std::vector<sim_event>& events, const page_ref& page) {
  page_walk walk(page);
  for (std::size_t i = 0; i < events.size(); ++i) walk.observe(events[i], i);
  return std::move(walk.moments);
}

}  // namespace kvsim::sim
