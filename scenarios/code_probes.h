#pragma once
// Code probes: named points that mark a defensive mechanism of the safe core firing, or a
// dangerous window being entered (FoundationDB's CODE_PROBE, Coyote's coverage report). A
// green search means something only if it went where the bugs live: a search that never
// deferred a release, never refused a forged token and never aborted mid-copy says nothing
// about the code that handles those. `kvsim explore` reports per search how often each probe
// was hit, and a catalogue scenario's safe row whose declared probes (`expect_probes`) were
// not all hit is `unexercised`, not clean.
//
// Probes are read from the run's events, never by the core calling the simulator: the core
// stays unaware of being observed, exactly as in production.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

enum class probe : std::uint8_t {
  // Page ledger and transfers.
  deferred_release,               // a release held back pages still leased by a transfer
  lease_quarantined,              // a lease the transport could not confirm stopped
  lease_quarantine_confirmed,     // ... and its confirmation gave the pages back
  transport_timeout_unconfirmed,  // a poll said "timed out" while the copy still ran (B12)
  decode_quarantine_confirmed,    // decode kept pages out of reuse until the transport (or the
                                  // late ACKs) confirmed nothing writes them any more
  peer_death_handled,             // decode learnt a prefill rank died and held its pages
  careless_call_refused,          // the ledger refused a careless caller's call (fault misuse)
  // Room lifetimes.
  tombstone_left,        // an abort closed a room before it opened
  late_sender_refused,   // a late open met that tombstone
  tombstone_evicted,     // the bounded tombstone table filled up and evicted
  tombstone_retired,     // a newer generation's open ended an older one's before-open tombstone
  abort_between_chunks,  // a chunk was queued, the next refused: the room had closed
  abort_mid_copy,        // an abort or failure landed while a copy was half done
  // Abort tokens and drain-ACKs.
  forged_token_refused,            // a token whose MAC does not verify
  wrong_generation_token_refused,  // prefill refused a genuine token of another room incarnation
  duplicate_abort_ignored,         // prefill refused an abort token it had accepted already
  duplicate_ack_ignored,           // decode counted a repeated drain-ACK once
  stale_generation_ack_ignored,    // decode refused an ACK of an older incarnation of the room
  foreign_party_token_refused,     // a genuine token presented by or to a rank it was not for
  retired_token_refused,           // a drain-ACK for a request that finished: its key is retired
  unproven_message_refused,        // a drain-ACK, chunk_ready or status without its link's proof
  stranger_message_refused,        // an ABORT, ACK or progress from a rank no party to the request
  unissued_ack_refused,            // a proven drain-ACK echoing a token this life never issued
  // Transfer status.
  failed_kept_sticky,  // a late update met a Failed status and was ignored
  // HiCache prefetch.
  pending_prefetch_revoked,  // a pending prefetch revoked before the group agreed
  active_prefetch_drained,   // an active prefetch drained before the barrier
  io_tail_freed,             // the I/O actor freed the tail after its storage call
};
inline constexpr std::size_t probe_count = 27;

const char* to_string(probe p);
std::optional<probe> probe_from_string(std::string_view name);

using probe_hits = std::array<std::uint64_t, probe_count>;

// Counts the probes of one run as its events go by (observe, in order), or at once
// (count_probes). The roles of ranks are learnt from the events themselves: a rank that
// issued an abort token is a decode rank, so a duplicate token it refuses is an ACK.
class probe_counter {
 public:
  void observe(const sim::sim_event& e);
  const probe_hits& hits() const { return hits_; }

 private:
  struct copy_progress {
    core::room_key owner;
    std::size_t pages = 0;
    std::size_t copied = 0;
  };
  void hit(probe p) { ++hits_[static_cast<std::size_t>(p)]; }
  void observe_core(const core::event& e);
  void token_refused(core::rank_id rank, const core::token_rejected& t);
  bool copy_half_done(const core::room_key& key) const;

  probe_hits hits_{};
  std::set<core::rank_id> token_issuers_;
  std::map<sim::transfer_id, copy_progress> copies_;  // submitted, not yet ended
  std::set<std::pair<core::rank_id, core::room_key>> chunks_admitted_;
  std::set<std::pair<core::rank_id, core::room_key>> rooms_opened_;
  std::set<std::pair<core::rank_id, core::room_key>> deadline_quarantined_;
  std::map<std::pair<core::rank_id, core::lease_id>, core::lease_role> lease_roles_;
  std::set<core::rank_id> drained_before_barrier_;  // drained an active read, barrier pending
  std::set<std::pair<core::rank_id, core::room_key>> reads_cut_short_;
};

probe_hits count_probes(const std::vector<sim::sim_event>& events);

}  // namespace kvsim::scenarios
