#pragma once
// Who holds each page of one rank's ledger, as that ledger's events say (pages_allocated,
// page_freed): what a script thread may know of a ledger that only its rank's owner thread
// may call (core/owner_thread.h). Fed inside event_log::emit, so it changes in the order the
// ledger did, and it is current as soon as the owner's call that changed it returns. Given
// slots of shared memory (script_board.h), it keeps the owners there, so that prefill's
// process reads what decode's process wrote.
#include <map>
#include <mutex>
#include <optional>
#include <variant>

#include "core/events.h"
#include "real_backend/scripts/script_board.h"
#include "real_backend/host/shared_region.h"

namespace kvsim::real {

class page_owner_view {
 public:
  explicit page_owner_view(core::rank_id rank, std::span<owner_slot> shared = {})
      : rank_(rank), shared_(shared) {}

  void observe(const core::event& e) {
    if (e.rank != rank_) return;
    if (const auto* allocated = std::get_if<core::pages_allocated>(&e.body)) {
      for (core::page_index p : allocated->pages) set(p, allocated->owner);
    } else if (const auto* freed = std::get_if<core::page_freed>(&e.body)) {
      set(freed->page, std::nullopt);
    }
  }

  std::optional<core::room_key> owner_of(core::page_index page) const {
    if (!shared_.empty()) {
      if (page >= shared_.size()) return std::nullopt;
      owner_slot& slot = shared_[page];
      lock_word(slot.lock);
      const std::optional<core::room_key> owner =
          slot.held != 0 ? std::optional<core::room_key>({slot.room, slot.generation}) : std::nullopt;
      unlock_word(slot.lock);
      return owner;
    }
    const std::lock_guard lock(mutex_);
    const auto it = owners_.find(page);
    if (it == owners_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void set(core::page_index page, std::optional<core::room_key> owner) {
    if (!shared_.empty()) {
      if (page >= shared_.size()) return;
      owner_slot& slot = shared_[page];
      lock_word(slot.lock);
      slot.held = owner ? 1 : 0;
      slot.room = owner ? owner->room : 0;
      slot.generation = owner ? owner->generation : 0;
      unlock_word(slot.lock);
      return;
    }
    const std::lock_guard lock(mutex_);
    if (owner) {
      owners_[page] = *owner;
    } else {
      owners_.erase(page);
    }
  }

  core::rank_id rank_;
  std::span<owner_slot> shared_;
  mutable std::mutex mutex_;
  std::map<core::page_index, core::room_key> owners_;
};

}  // namespace kvsim::real
