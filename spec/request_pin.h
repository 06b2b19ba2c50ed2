#pragma once
// A request's timeline pinned from a production log (scenarios/SCHEMA.md, "requests[i].pin"):
// so that a logged incident replays as logged, a scenario may name the exact pages decode's
// allocator handed the request and the virtual times at which the request was submitted and
// aborted. Every field is optional; a pin pins at least one. Without a pin the world chooses
// (the ledger's allocation order, the search's placement of the abort) as it always did.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"

namespace kvsim::scenarios {

// One event-loop iteration of a transfer world's scheduler (and of prefill's bootstrap thread)
// takes this much virtual time. The bootstrap thread polls until the last request is served,
// a scheduling step per poll, so a run of N steps reaches at most N x this many microseconds:
// the parser refuses a pinned time past that.
inline constexpr std::uint64_t transfer_poll_interval_us = 5;

struct request_pin {
  // The destination pages decode allocates for the request, in order (page j of the request
  // lands in decode_pages[j]), on every decode rank; exactly `pages` of them. Empty: not
  // pinned. A pinned page still held by another request is waited for, as the logged
  // allocator only handed it out once it was free.
  std::vector<core::page_index> decode_pages;
  // Virtual microseconds from the run's start: prefill and decode start the request (allocate
  // its pages) no earlier than this.
  std::optional<std::uint64_t> submit_at_us;
  // Virtual microseconds from the run's start at which decode sends the request's abort
  // (a decode abort of phase `anytime`: the time places it, not the search).
  std::optional<std::uint64_t> abort_at_us;

  bool pins_anything() const { return !decode_pages.empty() || submit_at_us || abort_at_us; }

  friend bool operator==(const request_pin&, const request_pin&) = default;
};

}  // namespace kvsim::scenarios
