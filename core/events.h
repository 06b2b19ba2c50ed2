#pragma once
// Typed events: every decision of the ledger, the room lifetimes, the transfer status table
// and the abort tokens. The checkers in properties/ prove invariants from this stream alone,
// so an event carries everything needed to say what happened to whom, never a pointer.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.h"
#include "core/ids.h"
#include "core/kv_status.h"

namespace kvsim::core {

// --- page ledger -------------------------------------------------------------------------
struct pages_allocated {
  room_key owner;
  std::vector<page_index> pages;
};
// Not misuse: the pool is full right now (back-pressure), so it is not a ledger_misuse.
struct allocation_refused {
  room_key owner;
  std::uint32_t pages_wanted = 0;
  std::uint32_t pages_free = 0;
};
struct lease_started {
  lease_id lease = 0;
  room_key owner;
  lease_role role = lease_role::source;
  std::vector<page_index> pages;
};
struct lease_ended {
  lease_id lease = 0;
  room_key owner;
  std::vector<page_index> pages;
};
// The transport could not confirm that the lease's transfer stopped (DOMAIN.md B12): its
// pages stay out of circulation until it does.
struct lease_quarantined {
  lease_id lease = 0;
  room_key owner;
  std::vector<page_index> pages;
};
struct quarantine_confirmed {
  lease_id lease = 0;
  room_key owner;
  std::vector<page_index> pages;
};
// The owner asked to give pages back; `deferred` are still leased and now retiring.
struct release_requested {
  room_key owner;
  std::vector<page_index> freed_now;
  std::vector<page_index> deferred;
};
struct page_freed {
  room_key owner;  // the owner the page had until this moment
  page_index page = 0;
};
struct ledger_misuse {
  ledger_error error = ledger_error::empty_request;
  room_key caller;  // the owner named by the call (zero when the call names a lease only)
  std::optional<page_index> page;
  std::optional<lease_id> lease;
};

// --- room lifetimes ----------------------------------------------------------------------
struct room_opened {
  room_key key;
};
struct room_closed {
  room_key key;
  std::uint32_t pending_leases = 0;
  bool tombstone = false;  // close came before open: a late open will be refused
};
struct chunk_admitted {
  room_key key;
  std::uint32_t pending_leases = 0;  // after admission
};
struct chunk_released {
  room_key key;
  std::uint32_t pending_leases = 0;  // after release
};
struct room_cleared {
  room_key key;
};
struct tombstone_evicted {
  room_key key;
};
// Refusals of the lifetime tracker: admission after close, a late open, misuse.
struct lifetime_refused {
  lifetime_error error = lifetime_error::unknown_room;
  room_key key;
};

// --- transfer status ---------------------------------------------------------------------
struct status_changed {
  room_key key;
  std::optional<kv_status> from;  // empty when the room had no status yet
  kv_status to = kv_status::bootstrapping;
};
enum class status_ignore_reason : std::uint8_t {
  failed_for_absent_room,  // must not resurrect a reused, already cleared room id
  regression,              // status only moves up
  terminal,                // Failed and Success are final
  unchanged,               // the room already has this status
};
struct status_update_ignored {
  room_key key;
  std::optional<kv_status> current;
  kv_status attempted = kv_status::failed;
  status_ignore_reason reason = status_ignore_reason::regression;
};

// --- abort tokens ------------------------------------------------------------------------
struct token_issued {
  room_key key;
  std::uint64_t nonce = 0;
};
struct token_accepted {
  room_key key;
  std::uint64_t nonce = 0;
};
struct token_rejected {
  room_key expected;
  room_key claimed;  // what the token says, which a forged token may lie about
  std::uint64_t nonce = 0;
  token_rejection reason = token_rejection::forged;
};

using event_body =
    std::variant<pages_allocated, allocation_refused, lease_started, lease_ended, lease_quarantined,
                 quarantine_confirmed, release_requested, page_freed, ledger_misuse,
                 room_opened, room_closed, chunk_admitted, chunk_released, room_cleared,
                 tombstone_evicted, lifetime_refused, status_changed, status_update_ignored,
                 token_issued, token_accepted, token_rejected>;

struct event {
  rank_id rank = 0;  // the rank whose component decided
  event_body body;
};

const char* to_string(status_ignore_reason reason);

// One readable line, e.g. "rank 1 lease_started lease=3 room 7/gen 0 destination [4,5]".
std::string describe(const event& e);

}  // namespace kvsim::core
