#pragma once
// A careless caller's call (the fault `misuse`), made on a page ledger exactly as recorded in
// its misuse_attempted event, so that the world and the tests make the same call the checker
// predicts from. Returns the ledger's refusal, or nothing when the ledger accepted the call.
#include <optional>

#include "core/errors.h"
#include "core/page_ledger.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

std::optional<core::ledger_error> make_careless_call(core::page_ledger& ledger,
                                                     const sim::misuse_attempted& call);

}  // namespace kvsim::scenarios
