#pragma once
// A careless caller's call (the fault `misuse`), made on a page ledger exactly as recorded in
// its misuse_attempted event, so that the world and the tests make the same call the checker
// predicts from. Returns the ledger's refusal, or nothing when the ledger accepted the call.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/page_ledger.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

// The first of `rooms`, from `start` on and wrapping, that `fits`; else `stranger`. How each
// careless call picks the room that makes it wrong.
template <class fits_call>
core::room_key first_room_where(const std::vector<core::room_key>& rooms, std::size_t start,
                                core::room_key stranger, fits_call fits) {
  for (std::size_t i = 0; i < rooms.size(); ++i) {
    const core::room_key key = rooms[(start + i) % rooms.size()];
    if (fits(key)) return key;
  }
  return stranger;
}

std::optional<core::ledger_error> make_careless_call(core::page_ledger& ledger,
                                                     const sim::misuse_attempted& call);

}  // namespace kvsim::scenarios
