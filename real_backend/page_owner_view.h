#pragma once
// Who holds each page of one rank's ledger, as that ledger's events say (pages_allocated,
// page_freed): what a script thread may know of a ledger that only its rank's owner thread
// may call (core/owner_thread.h). Fed inside event_log::emit, so it changes in the order the
// ledger did, and it is current as soon as the owner's call that changed it returns.
#include <map>
#include <mutex>
#include <optional>
#include <variant>

#include "core/events.h"

namespace kvsim::real {

class page_owner_view {
 public:
  explicit page_owner_view(core::rank_id rank) : rank_(rank) {}

  void observe(const core::event& e) {
    if (e.rank != rank_) return;
    const std::lock_guard lock(mutex_);
    if (const auto* allocated = std::get_if<core::pages_allocated>(&e.body)) {
      for (core::page_index p : allocated->pages) owners_[p] = allocated->owner;
    } else if (const auto* freed = std::get_if<core::page_freed>(&e.body)) {
      owners_.erase(freed->page);
    }
  }

  std::optional<core::room_key> owner_of(core::page_index page) const {
    const std::lock_guard lock(mutex_);
    const auto it = owners_.find(page);
    if (it == owners_.end()) return std::nullopt;
    return it->second;
  }

 private:
  core::rank_id rank_;
  mutable std::mutex mutex_;
  std::map<core::page_index, core::room_key> owners_;
};

}  // namespace kvsim::real
