#pragma once
// The decode side of a disaggregated KV transfer, for one decode rank: pre-allocated
// destination pages, metadata to every prefill rank, and the abort that frees nothing until
// it is safe. An abort is armed first (token issued, the expected ranks recorded, an event
// says so) and only then sent; each expected prefill rank's drain-ACK for this exact
// (room, generation, token) counts once; destination pages go back to the ledger only when
// every expected rank has drain-ACKed. A deadline that passes quarantines the pages (they
// stay owned, under a quarantined ledger lease, and are never reused) and never frees them;
// a late ACK still heals it. A prefill rank that dies (peer_liveness says lost) never ACKs:
// decode aborts what still waits for it and quarantines the pages, because its posted writes
// may still land; it counts the dead rank as drained only once the transport confirms the
// connection torn down, and then confirms the quarantine and frees.
//
// Authority: chunk_ready and status count only from the request's own prefill ranks, each
// proven by its sender under the key of their link (core/message_proof.h); a message that
// arrived before its request registered is held, and its sender checked when the request is
// published. A drain-ACK counts only from a rank the abort waits for, proven by it, echoing
// exactly the token issued to it for this abort (abort_token_verifier::accept_ack): an echo by
// anyone who merely saw the ABORT, a token minted by a holder of the link's key, or one issued
// before this rank restarted (another epoch) is refused, with the reason as an event.
//
// Bounded: a request is forgotten when it finishes (a bounded record of the recently
// finished ones answers finished() and drops their late messages); chunk_ready and status
// messages that arrive before their request is registered are held, bounded, and delivered
// when it is published (real transports deliver early and out of order). Per-call cost is
// O(log n) in the live requests, plus the requests a dead peer or a passed deadline touches.
//
// Threading: one owner (core/owner_thread.h); the scheduler and the receiver loop of a real
// engine hand their calls to it in turn.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/abort_token.h"
#include "core/bounded_key_set.h"
#include "core/owner_thread.h"
#include "core/page_ledger.h"
#include "core/ports.h"
#include "core/variant.h"

namespace kvsim::core {

struct decode_ports {
  messenger& control;
  const clock& time;
  event_sink& events;
  const peer_liveness& peers;
  // Where the running batch's store jobs go; a rank built without one stores nothing.
  store_engine* store = nullptr;
};

struct decode_state {
  page_ledger& ledger;
  abort_token_issuer& issuer;
  abort_token_verifier& tokens;
};

// How much the receiver remembers of requests that are not live.
struct decode_limits {
  std::uint32_t finished_remembered = 1024;  // finished() answers for the last these many
  std::uint32_t early_requests_held = 256;   // requests with messages held before registration
};

class decode_receiver {
 public:
  decode_receiver(rank_id rank, decode_ports ports, decode_state state, variant v,
                  decode_limits limits = {});

  // Destination pages for `key`, fed by `prefill_ranks`; empty when the pool is full.
  std::optional<std::vector<page_index>> prealloc(room_key key, std::uint32_t pages,
                                                  std::vector<rank_id> prefill_ranks);
  // As prealloc, on exactly `pages` (page_ledger::allocate_exact: a timeline replayed from a
  // log pins them); empty when the request is known already or the ledger refuses. A page
  // that is not free is refused as misuse: the caller waits until the ledger has them free.
  std::optional<std::vector<page_index>> prealloc_exact(room_key key,
                                                        std::span<const page_index> pages,
                                                        std::vector<rank_id> prefill_ranks);
  // The pool cannot serve `key` now and the engine's policy fails the request instead of
  // queueing it: nothing is allocated; an ABORT, armed first as every abort is, goes to each
  // prefill rank so that none opens the room or writes for it; and the request is over here at
  // once (request_finished, failed): no page of it exists for a late write to land in. A key
  // known already is left alone.
  void reject(room_key key, std::vector<rank_id> prefill_ranks);
  // The pages, to every prefill rank; then whatever arrived for `key` before it was known.
  void publish(room_key key);
  // The client went away: arm, then send ABORT to every prefill rank.
  void abort(room_key key, std::optional<std::uint64_t> deadline_us);
  void on_message(const control_message& message);
  void check_deadlines();
  // Polls peer liveness: aborts and quarantines what a lost prefill rank may still write,
  // counts a torn-down one as drained.
  void check_peers();
  // Every prefill rank reported its chunks done (the caller verifies the data, then completes).
  bool transfer_complete(room_key key) const;
  void complete(room_key key);
  // As complete, but the request goes on running on its pages (the engine's running batch,
  // core/running_requests.h): the transfer is over, its lease ends, and the pages stay the
  // key's for the caller to adopt. Empty, and nothing changes, unless the transfer of `key`
  // is complete here.
  std::optional<std::vector<page_index>> hand_over(room_key key);

  // From now on only the calling thread may call this receiver (core/owner_thread.h).
  void bind_owner(const thread_identity& identity) { owner_.bind(identity); }
  std::size_t request_count() const { return requests_.size(); }  // requests remembered now

  bool finished(room_key key) const;  // among the recently finished (decode_limits)
  std::size_t early_held() const { return early_.size(); }  // requests with messages held
  // The receiver's books against each other, one line per disagreement (empty: consistent):
  // the per-rank index names exactly the live requests' prefill ranks, the deadline set
  // exactly the pending deadlines of the aborts still waiting, no live request is among the
  // finished ones, and the early buffer and its eviction order hold the same requests.
  // O(n log n): for audits and tests, never on a hot path.
  std::vector<std::string> check_consistency() const;
  bool aborting(room_key key) const;
  bool quarantined(room_key key) const;
  // Pages of a live request (registered, not finished).
  const std::vector<page_index>& pages(room_key key) const { return requests_.at(key).pages; }

 private:
  enum class phase : std::uint8_t { transferring, aborting, quarantined, done };
  struct request {
    std::vector<page_index> pages;
    std::vector<rank_id> prefill_ranks;
    phase now = phase::transferring;
    std::map<rank_id, abort_token> tokens;  // one per expected prefill rank, its audience
    std::set<rank_id> acked;
    std::set<rank_id> ready;
    std::optional<std::uint64_t> deadline_us;
    std::set<rank_id> lost;       // expected ranks that died while this request waited for them
    std::set<rank_id> torn_down;  // of those, the ones whose transport confirmed the teardown
    // A destination lease on the pages from publish on (prefill's transport may write into
    // them from then), so that a release of them while it stands is deferred by the ledger;
    // quarantined when a deadline passes or a writer dies, ended (or confirmed) at release.
    std::optional<lease_id> receiving;
    bool receiving_quarantined = false;
  };

  // Registers a request on the destination pages the ledger just gave it.
  const std::vector<page_index>& track(room_key key, std::vector<page_index> pages,
                                       std::vector<rank_id> prefill_ranks);
  void arm_and_send_abort(room_key key, std::optional<std::uint64_t> deadline_us);
  void on_ack(const control_message& ack);
  void on_peer_lost(room_key key, rank_id peer, peer_state state);
  void count_teardown(room_key key, rank_id peer);
  void lease_pages(request& r, room_key key);
  void hold_pages(room_key key);
  // Every expected rank drain-ACKed or was torn down.
  // An abort armed and not yet settled: the only state in which a drain-ACK means anything.
  static bool awaits_acks(const request& r) {
    return r.now == phase::aborting || r.now == phase::quarantined;
  }
  static bool expects(const request& r, rank_id from);  // `from` is one of its prefill ranks
  bool settled(const request& r) const;
  std::uint32_t settled_count(const request& r) const;
  void finish_abort(room_key key);
  void on_progress(const control_message& message);  // chunk_ready or status of a live request
  void hold_early(const control_message& message);
  void deliver_early(room_key key);
  void release(room_key key, release_reason reason, request_outcome outcome);
  // Forgets a request that is over here (its books, deadline, per-rank index).
  void forget(room_key key);
  void emit(event_body body);

  rank_id rank_;
  decode_ports ports_;
  decode_state state_;
  variant variant_;
  std::map<room_key, request> requests_;  // live: registered and not finished
  bounded_key_set finished_;
  // Messages about requests not registered yet, one per (kind, sender), and their age order.
  std::map<room_key, std::map<std::pair<control_kind, rank_id>, control_message>> early_;
  bounded_key_set early_order_;
  std::set<std::pair<std::uint64_t, room_key>> deadlines_;  // aborting requests, soonest first
  std::map<rank_id, std::set<room_key>> waiting_on_;        // live requests per prefill rank
  single_owner owner_;
};

}  // namespace kvsim::core
