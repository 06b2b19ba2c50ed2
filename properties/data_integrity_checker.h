#pragma once
// DOMAIN.md I7: no request ever reads or keeps data written for another request, checked on
// the data.
//
// The simulated KV memory verifies every byte a reader reads against the canary it expects
// (sim/kv_memory.h), so a page_read with intact == false is the proof: the finding names the
// reader, the page, the rank, the step and whose bytes were there (the canary header's
// owner), or "unrecognisable bytes". To say how the bytes got there, the checker follows
// them: page_written (or a storage read's storage_page_written, into a host page) puts a
// writer's canary on a page and transfer_page_copied carries a source page's canary to its
// destination; when that provenance agrees with what the reader
// found, the message names the step (and transfer) that put the bytes there and the
// evidence includes it. The provenance only explains; the verdict is the data's.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/ids.h"
#include "properties/dense_index_map.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class data_integrity_checker : public sim::checker {
 public:
  const char* name() const override { return "data_integrity"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  // Whose canary a page should hold, and which event put it there.
  struct provenance {
    core::room_key writer;
    std::uint32_t logical_page = 0;
    event_mark landed;
    std::optional<sim::transfer_id> by_transfer;  // empty: written in place
  };

  std::optional<sim::finding> check_read(const sim::page_read& read, event_mark at) const;
  // The page's provenance; null when its bytes are of unknown origin.
  const provenance* origin(core::rank_id rank, core::page_index page) const;

  // By rank, then page, each an index (a tree keyed by (rank, page) grew with the world at
  // every copy); an empty slot: bytes of unknown origin.
  dense_index_map<core::rank_id, dense_index_map<core::page_index, std::optional<provenance>>>
      contents_;
};

}  // namespace kvsim::properties
