#pragma once
// kvsim_soak's driver: millions of requests through ONE prefill core and ONE decode core, to
// show whether the core's memory and speed stay flat as the number of requests served grows.
// It measures the core as it is; it never works around the core's growth.
//
// What is driven (core setup: soak_driver.cc, set_up_core, the only place that builds core
// objects):
//   prefill rank 0: prefill_sender with its page_ledger, room_lifetimes,
//                   transfer_status_table and abort_token_verifier;
//   decode rank 1:  decode_receiver with its page_ledger, abort_token_issuer and
//                   abort_token_verifier.
// The ports are trivial and in memory: a messenger per rank (one FIFO inbox per rank), a
// transfer engine whose transfers end after a drawn number of polls, a clock the driver moves
// by 1 ms per tick, peers always alive, and an event sink that COUNTS events and keeps none
// (keeping them would itself grow memory).
//
// Requests are pipelined: a window of `window` requests is live at any time. Each one is
// decode prealloc + publish, prefill allocate + open + send_chunk (1 to 3 chunks of 1 to 4
// sibling transfers each, one chunk per tick), transfers polled, and then one ending, drawn
// per request with the fixed mix `kind_mix_bp` (printed by kvsim_soak):
//   completes             prefill reports success (chunk_ready), decode completes;
//   decode_abort          decode aborts mid-transfer: ABORT, prefill on_abort, drain-ACK once
//                         the transfers ended, decode frees;
//   deadline_quarantine   decode aborts with a deadline that passes before the drain-ACK (long
//                         transfers): decode quarantines, the late ACK heals it;
//   abort_before_open     decode aborts right after publish, before prefill opened: the
//                         ABORT leaves a tombstone and is ACKed at once, the late open must be
//                         refused (prefill then gives its source pages back itself);
//   prefill_fail          prefill_sender::fail mid-transfer, reported to decode as a failed
//                         status: decode aborts and drains;
//   transfer_fails        one sibling transfer fails: the same failed report and drain;
//   transfer_unconfirmed  one sibling reports timed_out_unconfirmed (1 to 3 polls) before it
//                         succeeds: prefill quarantines its source lease and fails the request,
//                         decode aborts, the ACK goes out only after the copy's real end.
// Room ids come from a bounded pool (`room_ids`), each reuse with the next generation; a
// room id goes back to the pool once both sides finished its request (request_finished on
// both ranks) and every page of it is back. One in ten admissions takes the room id freed
// most recently (quick reuse), the rest the one freed longest ago.
//
// An OPERATION is one call the driver makes into a core object: decode prealloc, publish,
// abort, on_message, check_deadlines, check_peers, transfer_complete, complete; prefill
// ledger allocate/release, prefill open, send_chunk, poll, on_abort, fail, finish,
// the status table's get, in_flight. Calls the core makes into the ports (transfer submit/poll,
// messenger send, event emit) are not operations (each core call may make many), nor are the
// book-size probes read at a checkpoint. The count is deterministic for a seed.
//
// Deterministic for (seed, config): splitmix64 in the driver (this is a tool, not the core).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvsim::tools::soak {

enum class request_kind : std::uint8_t {
  completes,
  decode_abort,
  deadline_quarantine,
  abort_before_open,
  prefill_fail,
  transfer_fails,
  transfer_unconfirmed,
};
inline constexpr std::size_t request_kind_count = 7;
const char* to_string(request_kind kind);

// The fixed mix, in basis points (sums to 10,000), indexed by request_kind.
inline constexpr std::array<std::uint32_t, request_kind_count> kind_mix_bp = {
    7200,  // completes
    800,   // decode_abort
    400,   // deadline_quarantine
    600,   // abort_before_open
    400,   // prefill_fail
    300,   // transfer_fails
    300,   // transfer_unconfirmed
};

struct soak_config {
  std::uint64_t requests = 10'000'000;
  std::uint64_t seed = 1;
  std::uint32_t window = 64;      // requests live at once
  std::uint32_t room_ids = 4096;  // the bounded pool of room ids
  std::uint32_t pages_per_rank = 4096;
  std::uint32_t max_pages_per_request = 16;
  std::uint32_t tombstones_max = 1024;  // room_lifetimes' table size (each table, if several)
};

// One book of the core: something it keeps per request, room or abort.
struct book {
  std::string name;
  std::uint64_t size = 0;
};

// What the event sink counted and what the driver saw, for the closing summary.
struct soak_summary {
  std::array<std::uint64_t, request_kind_count> admitted_by_kind{};
  std::uint64_t events = 0;
  std::uint64_t releases_completed = 0;   // decode request_pages_released, completed
  std::uint64_t releases_after_acks = 0;  // decode request_pages_released, all_acks
  std::uint64_t releases_other = 0;
  std::uint64_t deadline_quarantines = 0;   // deadline_expired, quarantined
  std::uint64_t quarantines_confirmed = 0;  // quarantine_confirmed (both ranks)
  std::uint64_t transfers_unconfirmed = 0;  // transfer_unconfirmed
  std::uint64_t late_opens_refused = 0;     // lifetime_refused, tombstoned
  std::uint64_t late_opens_admitted = 0;    // driver: an abort_before_open request opened anyway
  std::uint64_t tombstones_evicted = 0;
  std::uint64_t lifetime_refusals = 0;  // all lifetime_refused
  std::uint64_t ledger_misuse = 0;      // must stay 0: the driver uses the ledgers right
  std::uint64_t tokens_rejected = 0;
  std::uint64_t allocations_refused = 0;   // allocation_refused (pool full: retried next tick)
  std::uint64_t chunks_refused = 0;        // send_chunk false outside an abort or failure
  std::uint64_t unknown_handle_polls = 0;  // the core polled a transfer already reported ended
  std::uint64_t ticks = 0;
};

class soak_driver {
 public:
  explicit soak_driver(const soak_config& config);
  ~soak_driver();
  soak_driver(const soak_driver&) = delete;
  soak_driver& operator=(const soak_driver&) = delete;

  // Ticks until `served` requests are served (1 <= served <= config.requests). Throws
  // std::runtime_error when a request stays live for more than 100,000 ticks (a hang).
  void run_until(std::uint64_t served);

  std::uint64_t served() const;
  std::uint64_t operations() const;
  // The core's books right now (decode requests, prefill rooms, room lifetimes' rooms and
  // tombstones, statuses, both token verifiers' memories, both ledgers' live leases).
  std::vector<book> books() const;
  // What --check-bounded allows each book: 4 * window + the tombstone tables' capacity.
  std::uint64_t book_bound() const;
  // Once every request is served: every page of both ledgers free, both ledgers consistent,
  // no message left undelivered. One line per problem; empty when the bench is valid.
  std::vector<std::string> final_audit();
  soak_summary summary() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace kvsim::tools::soak
