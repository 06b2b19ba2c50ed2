#pragma once
// HiCache storage-prefetch abort, coordinated across an attention group (seed change
// 000_08b9183a8efc8070, DOMAIN.md H1..H3). When a request is aborted, each rank may be in a
// different state for its prefetch: missing (no entry), pending (registered, no I/O yet) or
// active (storage I/O into host pages in flight). Every rank classifies itself and the group
// agrees with all_reduce(MAX) before anyone returns; if any rank is active, every rank joins
// the barrier: missing ranks only join, pending ranks revoke their prefetch first, active
// ranks drain their I/O, join, and only then release the lock and the host pages. Ownership
// of a terminated prefetch's pages: the scheduler frees the completed head; the I/O thread
// frees the unfinished tail after its storage call returns.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/events.h"
#include "core/owner_thread.h"
#include "core/ports.h"
#include "core/variant.h"

namespace kvsim::core {

struct prefetch_ports {
  collective& group;
  storage_io& storage;
  event_sink& events;
};

class prefetch_abort_coordinator {
 public:
  prefetch_abort_coordinator(rank_id rank, prefetch_ports ports, variant v);

  // A prefetch registered for `key`, no I/O yet.
  void register_pending(room_key key, std::vector<page_index> host_pages);
  // Its storage I/O starts: host pages are now written by the I/O thread.
  void start_io(room_key key);
  prefetch_state local_state(room_key key) const;
  // From now on only the calling thread may call this coordinator (core/owner_thread.h).
  void bind_owner(const thread_identity& identity) { owner_.bind(identity); }

  // Called by every rank of the group for the same aborted request.
  void release_aborted_request(room_key key);
  // A prefetch that was not aborted: this rank alone waits for its read and frees its pages
  // (the scheduler owns a completed read; the I/O thread the tail of a failed one).
  void complete(room_key key);

 private:
  struct prefetch {
    std::vector<page_index> host_pages;
    std::optional<storage_handle> io;
    bool pages_allocated = false;
  };

  // Waits for the read to return and reports it (prefetch_drained).
  storage_poll drain(room_key key, storage_handle io);
  // Drops the entry and reports it (prefetch_erased): I8 wants none left at the end.
  void erase(room_key key);
  void free_after_drain(room_key key, const prefetch& p, storage_poll outcome);
  void emit(event_body body);

  rank_id rank_;
  prefetch_ports ports_;
  variant variant_;
  std::map<room_key, prefetch> prefetches_;
  single_owner owner_;
};

}  // namespace kvsim::core
