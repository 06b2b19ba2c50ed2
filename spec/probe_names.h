#pragma once
// The names of the code probes (scenarios/code_probes.h counts them in a run): the vocabulary a
// scenario's `expect_probes` is written in, so the parser can refuse a name that is no probe
// without linking what counts them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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
  // Many requests at once.
  pool_exhausted_recovered,  // a rank's pool refused a request's pages, and later served them
  rooms_open_together,       // a prefill rank opened a room while another of its rooms was open
  // Running requests and their store jobs.
  preemption_deferred,     // a preempted request's pages were kept for a store job still reading
  store_job_drained,       // a store job ended after its request stopped running, freeing its pages
  store_table_full,        // the bounded store job table refused a store
  store_record_evicted,    // the bounded record of counted store completions forgot its oldest
  failed_for_pages,        // decode's pool could not serve a request and the engine failed it
};
inline constexpr std::size_t probe_count = 34;

const char* to_string(probe p);
std::optional<probe> probe_from_string(std::string_view name);

}  // namespace kvsim::scenarios
