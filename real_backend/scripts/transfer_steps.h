#pragma once
// The steps a transfer script hands its two ranks (transfer_script.h), by name
// (transfer_step_names.h), so that a step can cross a process boundary (rank_process.h) as
// well as a thread's: each is one call on the rank's actor, run by its owner thread, answered
// as text ("1"/"0" for a condition).
#include <cstddef>
#include <string>

#include "real_backend/scripts/transfer_decode.h"
#include "real_backend/scripts/transfer_prefill.h"
#include "real_backend/scripts/transfer_step_names.h"

namespace kvsim::real {

// Runs `step` on the actor; throws real_backend_error for a step of the other rank.
std::string run_step(prefill_actor& prefill, transfer_step step, std::size_t r);
std::string run_step(decode_actor& decode, transfer_step step, std::size_t r);

}  // namespace kvsim::real
