#pragma once
// The prefill side of a disaggregated KV transfer, for one prefill rank: admission through the
// room lifetime, chunks split into sibling futures that are all joined, and the two-phase
// abort of DOMAIN.md. An ABORT first makes the failure logical (status Failed, room closed:
// no new chunk is admitted), then registers the requesting decode rank's drain-ACK target;
// the drain-ACK for (room, generation, token) goes out only when the room is closed and no
// chunk of it is in flight on this rank. Source pages go back to the ledger only through
// release, which the ledger defers while a transfer still holds a lease on them.
//
// Authority: an ABORT of an open room is taken only from a decode rank the room serves; the
// verifier's memory of a room's ABORTs lives as long as the room (retired when it is
// forgotten), and an authentic ABORT of a room that is over is answered with a drain-ACK and
// changes nothing. Every drain-ACK, chunk_ready and status it sends bears this rank's proof
// under the key of its link to the receiver (core/message_proof.h).
//
// Single-threaded: the rank's scheduler and bootstrap actors call in turn; blocking lives in
// the ports. Each historical bug of core/variant.h that lives here is one `if` on `variant_`.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/abort_token.h"
#include "core/owner_thread.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "core/room_lifetimes.h"
#include "core/transfer_status_table.h"
#include "core/variant.h"

namespace kvsim::core {

struct prefill_ports {
  transfer_engine& transfers;
  messenger& control;
  event_sink& events;
};

struct prefill_state {
  page_ledger& ledger;
  room_lifetimes& lifetimes;
  transfer_status_table& statuses;
  abort_token_verifier& tokens;
};

class prefill_sender {
 public:
  prefill_sender(rank_id rank, prefill_ports ports, prefill_state state, variant v);

  // The sender for `key` exists from here; false when an ABORT came first (tombstone), and
  // then the request is finished on this rank, or when it is open already (nothing changes).
  // `decode_ranks` wait for this request: once it is over here (finish() called and nothing
  // in flight) each hears the outcome, chunk_ready or a failed status. A caller that reports
  // outcomes itself passes none.
  bool open(room_key key, std::span<const page_index> source_pages,
            std::span<const rank_id> decode_ranks = {});
  // Queues one chunk to `decode_rank`, split into `siblings` futures. False when the room no
  // longer admits chunks (closed by an abort) or was never opened.
  bool send_chunk(room_key key, rank_id decode_rank, std::span<const page_index> source_pages,
                  std::span<const page_index> destination_pages, std::uint32_t siblings);
  // Polls every in-flight future once; joins chunks whose futures all ended; sends due ACKs.
  void poll();
  // An ABORT from decode (bootstrap thread).
  void on_abort(const control_message& abort);
  // A failure decode did not start (transport error, heartbeat loss): Failed, closed.
  void fail(room_key key);
  // The scheduler is done with `key` (no more chunks): give source pages back; once nothing
  // is in flight, tell the decode ranks the outcome and forget the room.
  void finish(room_key key);

  // From now on only the calling thread may call this sender (core/owner_thread.h).
  void bind_owner(const thread_identity& identity) { owner_.bind(identity); }

  bool tracking(room_key key) const { return rooms_.contains(key); }
  std::size_t room_count() const { return rooms_.size(); }  // rooms tracked now
  bool in_flight(room_key key) const;  // any chunk of `key` still running here
  bool drained(room_key key) const;    // closed and nothing in flight

 private:
  struct chunk {
    rank_id decode_rank = 0;
    lease_id lease = 0;
    std::vector<transfer_handle> siblings;
    std::vector<bool> ended;
    bool released = false;     // lease and admission given back
    bool quarantined = false;  // a future timed out unconfirmed: the lease waits for its end
  };
  struct ack_target {
    rank_id decode_rank = 0;
    abort_token token;
  };
  struct room {
    std::vector<page_index> source_pages;
    std::vector<chunk> chunks;
    std::vector<ack_target> ack_targets;
    std::map<rank_id, std::size_t> pages_queued;  // per decode rank, over all chunks
    std::set<rank_id> cleared_for;                 // B7 only: transfer info dropped early
    std::vector<rank_id> decode_ranks;             // told the outcome when it is over
    // The request failed here: fail() (a transfer failed or stayed unconfirmed, or the engine
    // said so) or an accepted ABORT. Decode hears it and request_finished says it.
    bool failed = false;
    bool finished = false;
  };

  void release_chunk(room_key key, chunk& c);
  void quarantine_chunk(room_key key, chunk& c);
  void send_due_acks(room_key key, room& r);
  void send_ack(room_key key, const ack_target& target);
  void send_outcome(room_key key, rank_id decode, bool failed);
  void forget_if_done(room_key key);
  void forget_unopened(const room_lifetimes::unopened_ends& ended);
  void emit(event_body body);

  rank_id rank_;
  prefill_ports ports_;
  prefill_state state_;
  variant variant_;
  std::map<room_key, room> rooms_;
  single_owner owner_;
};

}  // namespace kvsim::core
