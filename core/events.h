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
  // The caller named the pages (page_ledger::allocate_exact, a logged incident's pin): the
  // free list's order does not say which pages come, only that they were free.
  bool exact = false;
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
// Which of the room table's two tombstone tables (core/room_lifetimes.h) a tombstone is in.
enum class tombstone_table : std::uint8_t {
  before_open,  // an ABORT came before the open: refuses that generation's late sender (B10)
  finished,     // an aborted incarnation that is over: refuses its reopen
};
struct room_closed {
  room_key key;
  std::uint32_t pending_leases = 0;
  bool tombstone = false;  // the room was not open here: a tombstone, if none was there yet
  // Where that tombstone goes: before_open for a close before the open (a late open will be
  // refused), finished for a close of an incarnation that is over here (its open came and went).
  tombstone_table table = tombstone_table::before_open;
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
// A full table made room for a new tombstone by dropping its oldest.
struct tombstone_evicted {
  room_key key;
  tombstone_table table = tombstone_table::before_open;
};
// A before-open tombstone that has nothing left to stop: a newer generation of its room
// opened on this rank, so its own generation can no longer arrive.
struct tombstone_retired {
  room_key key;
  generation_t opened = 0;  // the generation whose open retired it
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
// A finished room's status was forgotten (its id may be reused by the next request).
struct status_forgotten {
  room_key key;
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
  rank_id audience = 0;  // the one prefill rank it is good for
};
struct token_accepted {
  room_key key;
  std::uint64_t nonce = 0;
  rank_id issuer = 0;     // who the token says issued it
  rank_id presenter = 0;  // who presented it (the message's sender)
  rank_id audience = 0;   // who the token says it is for
};
struct token_rejected {
  room_key expected;
  room_key claimed;  // what the token says, which a forged token may lie about
  std::uint64_t nonce = 0;
  token_rejection reason = token_rejection::forged;
};

// --- disaggregated transfer abort protocol (prefill sender, decode receiver) --------------
// Decode armed an abort: from now on it waits for a drain-ACK from each expected rank.
struct abort_armed {
  room_key key;
  std::vector<rank_id> expected_ranks;
  std::uint64_t nonce = 0;
  // When the abort stops waiting for ACKs and quarantines instead (none: it waits for good).
  std::optional<std::uint64_t> deadline_us;
};
// Prefill registered who must be acknowledged once it has drained `key`.
struct ack_target_registered {
  room_key key;
  rank_id decode_rank = 0;
  std::uint64_t nonce = 0;
};
// Prefill sent a drain-ACK; `room_closed` and `in_flight` say what prefill believed then.
struct drain_ack_sent {
  room_key key;
  rank_id to = 0;
  std::uint64_t nonce = 0;
  bool room_closed = false;
  std::uint32_t in_flight = 0;  // transfers of `key` still running on this rank
};
// Decode counted a drain-ACK (each expected rank once).
struct drain_ack_counted {
  room_key key;
  rank_id from = 0;
  std::uint32_t received = 0;
  std::uint32_t expected = 0;
};
enum class release_reason : std::uint8_t {
  completed,       // the request finished normally
  at_abort,        // released the moment the abort was sent (only the historical B1)
  all_acks,        // every expected rank drain-ACKed the abort
  deadline,        // a deadline expired (only historical variants release here)
  local_failure,   // a failure decode did not initiate (only historical variants)
  // Every expected rank drained: a drain-ACK from each live one, and from each lost one the
  // transport's confirmation that its connection is torn down (nothing of it lands any more).
  acks_and_teardowns,
};
// A side gave back the request's pages to its ledger.
struct request_pages_released {
  room_key key;
  release_reason reason = release_reason::completed;
  std::uint32_t acks_received = 0;
  std::uint32_t acks_expected = 0;
};
enum class deadline_action : std::uint8_t { quarantined, failed_closed, released };
struct deadline_expired {
  room_key key;
  deadline_action action = deadline_action::quarantined;
};
// preempted: the engine took the running request's pages back; a new incarnation (the next
// generation of its room) resumes it.
enum class request_outcome : std::uint8_t { succeeded, aborted, failed, preempted };
// The request is over on this rank: the I9 checker wants every request to get here.
struct request_finished {
  room_key key;
  request_outcome outcome = request_outcome::succeeded;
};
// Decode held messages about a request it had not registered yet (a transport delivers
// early and out of order) and let them go undelivered: the buffer was full and these were
// the oldest, or a newer generation of the room registered, so this one never will.
struct early_messages_dropped {
  room_key key;
  std::uint32_t messages = 0;
};

// --- running requests and their store jobs (decode) ----------------------------------------
// The transfer is over and the request runs on its pages (adopted from the receiver, or
// allocated for a resumed incarnation after a preemption).
struct request_running {
  room_key key;
  std::vector<page_index> pages;
  bool resumed = false;
};
// A store job reads `pages` of `owner` into host memory or storage (HiCache write-back, an
// offload connector's store). `lease`: the ledger lease that keeps the pages from reuse until
// the job ends (absent only in the historical B15).
struct store_job_started {
  store_job_id job = 0;
  room_key owner;
  std::vector<page_index> pages;
  std::optional<lease_id> lease;
};
// The table of jobs in flight is full: the store is skipped (best effort, as offloading
// connectors skip a store they have no room for) and the pages are released as without it.
struct store_job_refused {
  room_key owner;
  std::uint32_t in_flight = 0;
};
// A completion was counted: `job` ended (`stored` false: it failed), and the lease `ended` is
// the one it gave back (the job's own, except in the historical B13).
struct store_job_done {
  store_job_id job = 0;
  room_key owner;
  bool stored = true;
  std::optional<lease_id> ended;
};
enum class store_ignore_reason : std::uint8_t {
  already_counted,  // a duplicate: the job's completion was counted (among the remembered)
  not_in_flight,    // never started, abandoned, or counted so long ago it was forgotten
  owner_mismatch,   // the completion names another request than the job's
};
struct store_completion_ignored {
  store_job_id job = 0;
  room_key owner;
  store_ignore_reason reason = store_ignore_reason::not_in_flight;
};
// The bounded record of counted completions was full: the oldest, `job`'s, is forgotten (a
// duplicate of it arriving now is told apart only as not in flight).
struct store_completion_forgotten {
  store_job_id job = 0;
};
// Only the historical B14: preemption reset the store tracker and dropped this job's lease
// while its copy may still read the pages.
struct store_job_abandoned {
  store_job_id job = 0;
  room_key owner;
};
enum class running_end : std::uint8_t { finished, preempted };
// The request stopped running here and gave its pages back: `deferred` of them are still
// read by a store job, so they retire and are freed when it ends.
struct running_request_ended {
  room_key key;
  running_end how = running_end::finished;
  std::uint32_t page_count = 0;
  std::uint32_t deferred = 0;
};
enum class running_refusal : std::uint8_t {
  already_running,  // adopt or resume of a key that runs already
  not_running,      // store, preempt or finish of a key that does not run here
  pages_not_owned,  // adopt of pages the key does not own in the ledger
  no_store_engine,  // store on a rank built without a store engine
};
struct running_call_refused {
  room_key key;
  running_refusal reason = running_refusal::not_running;
};

// --- peer death and unconfirmed transports ---------------------------------------------------
enum class peer_death_action : std::uint8_t {
  quarantined,        // the request's pages stay out of reuse until the transport confirms
  already_torn_down,  // the transport had confirmed already: nothing of the peer can land
  released,           // freed at once (only the historical B8)
};
// Decode learned (core/ports.h peer_liveness) that `peer`, which request `key` still waits
// for, is lost, and what it did about the request.
struct peer_death_handled {
  room_key key;
  rank_id peer = 0;
  peer_death_action action = peer_death_action::quarantined;
};
// Decode counts a lost peer as drained for `key`: the transport confirmed its connection torn
// down. `settled` counts drain-ACKs and teardowns together, of `expected` ranks.
struct teardown_counted {
  room_key key;
  rank_id peer = 0;
  std::uint32_t settled = 0;
  std::uint32_t expected = 0;
};
// Prefill: the transport gave up waiting for a copy of `key` it cannot say has stopped
// (DOMAIN.md B12). The chunk's source lease is quarantined and the request fails; the pages
// stay out of reuse and no drain-ACK goes out until a later poll confirms the copy's end.
struct transfer_unconfirmed {
  room_key key;
  lease_id lease = 0;
};
// Prefill told a decode rank how the request ended on this rank (chunk_ready, or a Failed
// status when `failed`): decided here, on the wire from the next step.
struct outcome_reported {
  room_key key;
  rank_id to = 0;
  bool failed = false;
};

// --- HiCache prefetch abort coordination --------------------------------------------------
enum class prefetch_state : std::uint8_t { missing = 0, pending = 1, active = 2 };
// A prefetch entry exists on this rank from registration to erasure (I8: none at the end).
struct prefetch_registered {
  room_key key;
};
struct prefetch_erased {
  room_key key;
};
struct prefetch_classified {
  room_key key;
  prefetch_state local = prefetch_state::missing;
};
struct prefetch_agreed {
  room_key key;
  prefetch_state group_max = prefetch_state::missing;
};
struct prefetch_revoked {
  room_key key;
};
enum class host_page_owner : std::uint8_t { scheduler, io_thread };
struct host_pages_allocated {
  room_key key;
  std::vector<page_index> pages;
};
struct host_pages_freed {
  room_key key;
  std::vector<page_index> pages;
  host_page_owner by = host_page_owner::scheduler;
};
// The lock pins the prefetch's host pages while its storage I/O may write them (SGLang's
// protect_host / release_host on the prefetch's host node): taken when the I/O starts.
struct prefetch_lock_taken {
  room_key key;
};
struct prefetch_lock_released {
  room_key key;
};
// The rank waited for its storage read to return (no cancel for a storage call in flight);
// `read_completed` false: the read failed part-way, its unfinished tail is the I/O thread's.
struct prefetch_drained {
  room_key key;
  bool read_completed = true;
};

using event_body =
    std::variant<pages_allocated, allocation_refused, lease_started, lease_ended, lease_quarantined,
                 quarantine_confirmed, release_requested, page_freed, ledger_misuse,
                 room_opened, room_closed, chunk_admitted, chunk_released, room_cleared,
                 tombstone_evicted, tombstone_retired, lifetime_refused, status_changed, status_update_ignored,
                 status_forgotten,
                 token_issued, token_accepted, token_rejected, abort_armed,
                 ack_target_registered, drain_ack_sent, drain_ack_counted,
                 request_pages_released, deadline_expired, request_finished,
                 prefetch_registered, prefetch_erased, prefetch_classified, prefetch_agreed,
                 prefetch_revoked, host_pages_allocated, host_pages_freed, prefetch_lock_taken,
                 prefetch_lock_released, prefetch_drained, peer_death_handled, teardown_counted,
                 transfer_unconfirmed, early_messages_dropped, outcome_reported,
                 request_running, store_job_started, store_job_refused, store_job_done,
                 store_completion_ignored, store_completion_forgotten, store_job_abandoned,
                 running_request_ended,
                 running_call_refused>;

struct event {
  rank_id rank = 0;  // the rank whose component decided
  event_body body;
};

const char* to_string(status_ignore_reason reason);
const char* to_string(release_reason reason);
const char* to_string(deadline_action action);
const char* to_string(request_outcome outcome);
const char* to_string(prefetch_state state);
const char* to_string(host_page_owner owner);
const char* to_string(peer_death_action action);
const char* to_string(store_ignore_reason reason);
const char* to_string(running_end how);
const char* to_string(running_refusal reason);

// One readable line, e.g. "rank 1 lease_started lease=3 room 7/gen 0 destination [4,5]".
std::string describe(const event& e);

}  // namespace kvsim::core
