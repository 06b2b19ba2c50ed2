#pragma once
// Everything that happens in a simulated world, as typed events: the core's own decisions
// (wrapped), and what the simulated ports and memory did. Checkers (properties/) prove
// invariants from this stream alone; traces print it. No pointers, only stable ids.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "core/kv_status.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "sim/actor_name.h"

namespace kvsim::sim {

using transfer_id = std::uint64_t;
using message_id = std::uint64_t;
using group_id = std::uint32_t;

struct core_decided {
  core::event what;
};
struct actor_started {
  actor_name name;
};
struct actor_finished {
  bool cancelled = false;  // unwound at the end of a run rather than returned
};

enum class collective_op : std::uint8_t { all_reduce_min, all_reduce_max, barrier };
const char* to_string(collective_op op);

struct collective_entered {
  group_id group = 0;
  std::uint64_t sequence = 0;  // per group and member: the n-th collective this member enters
  core::rank_id rank = 0;
  collective_op op = collective_op::barrier;
  std::int64_t value = 0;
};
struct collective_left {
  group_id group = 0;
  std::uint64_t sequence = 0;
  core::rank_id rank = 0;
  std::int64_t result = 0;
};

struct transfer_submitted {
  transfer_id transfer = 0;
  core::room_key owner;
  core::rank_id source_rank = 0;
  core::rank_id destination_rank = 0;
  std::vector<core::page_index> source_pages;
  std::vector<core::page_index> destination_pages;
};
// One page of a transfer: source bytes read and destination bytes written, in one step.
struct transfer_page_copied {
  transfer_id transfer = 0;
  core::room_key owner;
  core::rank_id source_rank = 0;
  core::page_index source_page = 0;
  core::rank_id destination_rank = 0;
  core::page_index destination_page = 0;
};
struct transfer_ended {
  transfer_id transfer = 0;
  core::room_key owner;
  core::transfer_poll outcome = core::transfer_poll::succeeded;
};
// A poll that returned "timed out" while the copy may still run (DOMAIN.md B12).
struct transfer_timed_out {
  transfer_id transfer = 0;
  core::room_key owner;
  bool still_running = false;
};

// Simulated KV memory: who wrote or read which page, and what the bytes said.
struct page_written {
  core::rank_id rank = 0;
  core::page_index page = 0;
  core::room_key writer;           // whose canary was written
  std::uint32_t logical_page = 0;  // the page's index within the writer's request
};
struct page_read {
  core::rank_id rank = 0;
  core::page_index page = 0;
  core::room_key reader;  // whose data the reader expects
  std::uint32_t logical_page = 0;
  bool intact = false;                // every byte matched the reader's canary
  std::optional<core::room_key> found;  // whose canary the bytes carry, when recognisable
};

// HiCache storage reads into host pages (sim/sim_storage.h): the rank's I/O actor writes one
// host page per step, so a read can be half done when an abort lands.
using storage_read_id = std::uint64_t;
struct storage_read_started {
  storage_read_id read = 0;  // unique per rank
  core::rank_id rank = 0;
  core::room_key owner;
  std::vector<core::page_index> host_pages;
};
// One page of a read landed: the owner's canary for `logical_page` is now in host page `page`.
struct storage_page_written {
  storage_read_id read = 0;
  core::rank_id rank = 0;
  core::room_key owner;
  core::page_index page = 0;
  std::uint32_t logical_page = 0;
};
// The storage call returned: every page written (completed) or it failed part-way.
struct storage_read_ended {
  storage_read_id read = 0;
  core::rank_id rank = 0;
  core::room_key owner;
  bool completed = true;
  std::uint32_t pages_written = 0;
};

struct message_sent {
  message_id message = 0;
  core::rank_id from = 0;
  core::rank_id to = 0;
  core::control_kind kind = core::control_kind::metadata;
  core::room_key key;
  // The adversary's own message (a replay or a forgery, sim_network::attack): `from` says
  // whom it claims to come from, not who sent it.
  bool injected = false;
};
struct message_delivered {
  message_id message = 0;
  core::rank_id to = 0;
};
// The first transmission was lost; the transport resends it (message_delivered follows).
struct message_dropped {
  message_id message = 0;
};

struct fault_fired {
  std::string what;
};
struct gate_changed {
  std::string gate;
  bool open = false;
};
// The world made rank `rank` fail request `key` on its own (a prefill-side failure decode did
// not ask for, DOMAIN.md B8): the record a checker needs to tell whether the failure was
// honoured, even by a core that ignored it.
struct failure_injected {
  core::room_key key;
  core::rank_id rank = 0;
};

// A rank's page ledger, read through its own accessors once every actor has returned (an
// audit at quiescence, like FoundationDB's consistency check), or mid-run by a monitor next
// to the careless caller (fault `misuse`): what the ledger believes it holds. The checkers compare it with what its events said it did, so books that disagree
// with the decisions (a page the events freed that the ledger still counts, or the reverse)
// are seen even when no later transfer happens to touch the page.
struct ledger_audited {
  struct owned_page {
    core::page_index page = 0;
    core::room_key owner;
    std::uint32_t leases = 0;  // lease_count(page)
    bool retiring = false;     // is_retiring(page)

    friend bool operator==(const owned_page&, const owned_page&) = default;
  };
  core::rank_id rank = 0;
  std::uint32_t pages_total = 0;
  std::uint32_t free_pages = 0;
  std::uint32_t owned_pages = 0;  // owned and not retiring
  std::uint32_t retiring_pages = 0;
  std::uint32_t leased_pages = 0;
  std::uint32_t quarantined_pages = 0;
  std::uint32_t active_leases = 0;
  std::vector<owned_page> owned;  // every page with an owner_of, ascending
  // pages_of(owner) for every owner the scenario knows, empty answers included.
  std::vector<std::pair<core::room_key, std::vector<core::page_index>>> pages_of;
  std::vector<std::string> inconsistencies;  // the ledger's own check_consistency()
  // What the accessors answer for pages past the pool (pages_total and the largest index):
  // an owner, leases or retiring there would be a read past the page table.
  struct beyond_page {
    core::page_index page = 0;
    std::optional<core::room_key> owner;  // owner_of(page)
    std::uint32_t leases = 0;             // lease_count(page)
    bool retiring = false;                // is_retiring(page)

    friend bool operator==(const beyond_page&, const beyond_page&) = default;
  };
  std::vector<beyond_page> beyond_pool;
};

// The world built a page ledger for `rank`: its pool and the order it hands out free pages,
// so that the checkers can follow the free list from the first allocation on.
struct ledger_created {
  core::rank_id rank = 0;
  std::uint32_t pages_total = 0;
  core::allocation_order order = core::allocation_order::lifo;
};

// What a core component other than the ledger still holds once every actor has returned,
// read through its accessors (the audit at quiescence again): rooms a sender still tracks,
// rooms still admitting or with chunk leases, statuses kept, requests decode never finished.
// Every line is a leak (I8): a serving engine runs for months, and what a finished request
// leaves behind is memory, a room id that cannot be reused, or an ACK target never answered.
struct core_audited {
  core::rank_id rank = 0;
  std::string component;          // "prefill_sender", "room_lifetimes", ...
  std::vector<std::string> held;  // one line per thing still held; empty: nothing
};

// A scheduler read a request's transfer status from its rank's table (what SGLang's poll
// loop does every iteration); emitted when the value read changes. The checkers compare it
// with the status the table's own events gave the request.
struct status_read {
  core::rank_id rank = 0;
  core::room_key key;
  std::optional<core::kv_status> status;  // empty: the table has no status for the room
};

// A transfer worker wrote a status late (fault `late_status`), emitted right after the
// update returned: `applied` is what the table answered. The checkers hold the answer, and the
// table's event just before it (a status_changed to `status`, or a status_update_ignored of
// it), against the table's books.
struct status_written {
  core::rank_id rank = 0;
  core::room_key key;
  core::kv_status status = core::kv_status::failed;
  bool applied = false;
};

// Peer death (sim_liveness.h): `rank` stopped for good; its actors end, messages to and from
// it are lost, its posted transfers may still write until the transport is torn down.
struct rank_stopped {
  core::rank_id rank = 0;
};
// The transport confirms dead `rank`'s connections torn down: nothing of it lands any more.
struct transport_torn_down {
  core::rank_id rank = 0;
};
// A message lost for good: its sender or its receiver is dead (no reconnect resends it).
struct message_lost {
  message_id message = 0;
  core::rank_id to = 0;
};

// A careless caller (the fault `misuse`): code outside the core that calls a rank's page
// ledger wrongly, as a serving engine's scheduler with a bookkeeping bug would (a release of
// pages it never had, a lease on a page out of the pool, an end of a lease id it made up).
// The world emits misuse_attempted, makes the call, and emits misuse_answered with what the
// ledger returned; everything the ledger emits in between belongs to the call. The checkers
// predict the refusal from the ledger's own history and hold the answer against it.
enum class ledger_call : std::uint8_t { allocate, lease, release, end_lease, quarantine,
                                        confirm_quarantine, release_all };
const char* to_string(ledger_call call);

struct misuse_attempted {
  core::rank_id rank = 0;
  ledger_call call = ledger_call::allocate;
  core::room_key caller;                    // allocate, lease, release(_all): the owner named
  core::lease_role role = core::lease_role::source;  // lease
  std::vector<core::page_index> pages;      // lease, release
  std::uint32_t count = 0;                  // allocate
  core::lease_id lease = 0;                 // end_lease, quarantine, confirm_quarantine
  std::uint32_t pages_total = 0;            // the pool's size (pages at or past it are out of range)
};
struct misuse_answered {
  core::rank_id rank = 0;
  std::optional<core::ledger_error> error;  // empty: the ledger accepted the call
};

// The world built `rank`'s room table (core::room_lifetimes) with room for `tombstones_max`
// tombstones, so that the checkers can follow its evictions from the first close on.
struct lifetimes_created {
  core::rank_id rank = 0;
  std::uint32_t tombstones_max = 0;
};

// The careless caller (fault `misuse`) calls a prefill rank's room table wrongly too, as
// engine glue with a bookkeeping bug would: an open of a room already open or tombstoned, an
// admission to a closed or unknown room, a lease release with none pending, a clear with leases
// pending. Bracketed like misuse_attempted/misuse_answered: the table's events in between
// belong to the call.
enum class lifetime_call : std::uint8_t { open, try_acquire, release, clear };
const char* to_string(lifetime_call call);

struct lifetime_misuse_attempted {
  core::rank_id rank = 0;
  lifetime_call call = lifetime_call::open;
  core::room_key key;
};
// A monitor next to the careless caller reads the room table's accessors for every room of
// the scenario right after each careless call: the checkers hold the answers against the
// table's events (an accessor that lies sends the engine's glue down the wrong path).
struct room_table_read {
  struct room_answer {
    core::room_key key;
    bool tracked = false;     // is_tracked
    bool admitting = false;   // is_admitting
    bool closed = false;      // is_closed
    bool tombstoned = false;  // is_tombstoned
    std::uint32_t pending_leases = 0;

    friend bool operator==(const room_answer&, const room_answer&) = default;
  };
  core::rank_id rank = 0;
  std::vector<room_answer> rooms;
};
// A decode engine gave up on a request the core gave up on first (its deadline expired, or a
// prefill rank it waits on died and the core held its pages) and freed the request's pages
// itself, as SGLang's scheduler frees a timed-out request: the world calls the ledger's
// release_all for `key` right after this event. What a transport may still write must stay
// out of reuse: the core's quarantine lease defers those pages until it confirms the end.
struct engine_freed {
  core::rank_id rank = 0;
  core::room_key key;
};

// The careless caller also calls the engine-facing core wrongly where the core must ignore
// the call: decode's abort or complete of a request that is not transferring (a second
// client cancel, a completion racing the abort), a prealloc of a request already registered,
// and prefill's send_chunk for a room it does not know, with page lists of different lengths,
// with no sibling, or for a closed room. Bracketed like the ledger's misuse: the core may
// refuse (a lifetime_refused), but must decide nothing else and answer "not accepted".
enum class ignored_call : std::uint8_t {
  decode_abort, decode_complete, decode_prealloc, send_chunk_unknown_room,
  send_chunk_mismatched_pages, send_chunk_no_siblings, send_chunk_closed_room,
  open_open_room,     // prefill open() of a room already open: refused, nothing changes
  fail_unknown_room,  // prefill fail() of a request the sender does not track
};
const char* to_string(ignored_call call);

struct ignored_call_attempted {
  core::rank_id rank = 0;
  ignored_call call = ignored_call::decode_abort;
  core::room_key key;
};
struct ignored_call_answered {
  core::rank_id rank = 0;
  bool accepted = false;  // prealloc returned pages, send_chunk returned true
};

// A decode rank's scheduler called check_deadlines(): from here no abort of that rank whose
// deadline has passed may still wait for ACKs (the event's time is the clock it read).
struct deadlines_checked {
  core::rank_id rank = 0;
};

struct lifetime_misuse_answered {
  core::rank_id rank = 0;
  std::optional<core::lifetime_error> error;  // empty: the table accepted the call
};

using sim_event_body =
    std::variant<core_decided, actor_started, actor_finished, collective_entered,
                 collective_left, transfer_submitted, transfer_page_copied, transfer_ended,
                 transfer_timed_out, page_written, page_read, storage_read_started,
                 storage_page_written, storage_read_ended, message_sent, message_delivered,
                 message_dropped, fault_fired, gate_changed, failure_injected, ledger_audited,
                 core_audited, status_read, rank_stopped, transport_torn_down, message_lost,
                 misuse_attempted, misuse_answered, ledger_created, lifetimes_created,
                 lifetime_misuse_attempted, lifetime_misuse_answered, status_written,
                 room_table_read, ignored_call_attempted, ignored_call_answered,
                 engine_freed, deadlines_checked>;

struct sim_event {
  std::uint64_t step = 0;     // schedule decisions taken before this event
  std::uint64_t time_us = 0;  // virtual time
  actor_id actor = no_actor;  // who was running (no_actor: the world itself, e.g. a delivery)
  sim_event_body body;
};

// One readable line: "step 12 t=40us r1.decode.0 page_read r1 page 3 ...".
std::string describe(const sim_event& e, const std::vector<actor_name>& actors);

}  // namespace kvsim::sim
