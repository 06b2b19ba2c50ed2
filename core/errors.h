#pragma once
// The ways the core refuses a call. Every refusal leaves the state exactly as it was and is
// also emitted as an event: in the simulator a refusal of misuse is a finding.
#include <cstdint>

namespace kvsim::core {

enum class ledger_error : std::uint8_t {
  empty_request,          // zero pages asked for, or an empty page list
  not_enough_free_pages,  // allocation larger than the free pool
  page_out_of_range,      // page index beyond the pool
  duplicate_page,         // the same page named twice in one call
  page_not_owned,         // the page is free: nobody may lease it
  not_owner,              // the page belongs to another (room, generation)
  double_release,         // release of a free page, or of one whose release is already pending
  page_retiring,          // lease of a page whose owner already asked to release it
  unknown_lease,          // a lease id this ledger never issued
  lease_underflow,        // ending a lease that already ended (its counts would go below zero)
  lease_quarantined,      // plain end of a quarantined lease: only the transport may confirm it
  lease_not_quarantined,  // confirmation of a lease that was never quarantined
  // An exact allocation (allocate_exact) names a page that is not free: owned, retiring or
  // quarantined. Last, so that the numbers of the older errors stay what they were.
  page_not_free,
};

enum class lifetime_error : std::uint8_t {
  unknown_room,     // no such (room, generation) is tracked
  already_open,     // open of a (room, generation) that is already open
  tombstoned,       // open after a close that came first: the late sender is refused
  room_closed,      // admission after close (abort): no new chunk may be queued
  lease_underflow,  // release of a chunk lease that was never acquired
  leases_pending,   // clear while chunks are still in flight
};

// Why an abort token was not accepted.
enum class token_rejection : std::uint8_t {
  forged,             // the MAC does not verify: tampered, or made with another cluster's key
  foreign_room,       // genuine, but for another room
  stale_generation,   // genuine, but for an older incarnation of this room
  future_generation,  // genuine, but for a newer incarnation than the one asked about
  duplicate,          // genuine and already accepted once
  // Genuine, but not passing between its two parties: an ABORT must come from the token's
  // issuer to its audience, a drain-ACK from its audience back to its issuer. One prefill
  // peer's token never serves for another's ACK.
  foreign_issuer,
  retired,  // genuine, but its (room, generation) is over here: a replay after forget
  // A drain-ACK, chunk_ready or status without its sender's proof under the key of its link
  // to this rank: an echo of a token by someone who saw it but holds no key of that link.
  unproven,
  // From a rank that is no party to the request: not one of the prefill ranks it waits for.
  not_a_party,
  // A genuine, proven drain-ACK whose token is not the one this rank issued to that peer for
  // this abort: minted by a holder of the link's key, or issued in an earlier life of this rank.
  not_issued,
};

const char* to_string(ledger_error error);
const char* to_string(lifetime_error error);
const char* to_string(token_rejection rejection);

}  // namespace kvsim::core
