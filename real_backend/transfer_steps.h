#pragma once
// The steps a transfer script hands its two ranks (transfer_script.h), by name, so that a
// step can cross a process boundary (rank_process.h) as well as a thread's: each is one call
// on the rank's actor, run by its owner thread, answered as text ("1"/"0" for a condition).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "real_backend/transfer_decode.h"
#include "real_backend/transfer_prefill.h"

namespace kvsim::real {

enum class transfer_step : std::uint8_t {
  // decode
  wire_quiet,            // every control message sent so far has been handled
  ended,                 // request r finished or quarantined on decode
  aborting,              // decode is aborting request r
  prealloc_and_publish,  // retried while the pool is full
  abort,                 // the client went away
  all_ended,
  counted_text,          // "1 of 2": drain-ACKs counted for r's armed abort
  // prefill
  open_request,
  send_when_published,
  check_at_gate,  // r: the gate's index
  hold,
  saw_abort,
  open_held_gates,
  over,
  all_over,
};

std::string_view to_string(transfer_step step);
std::optional<transfer_step> transfer_step_named(std::string_view name);

// Refuses (real_backend_error) an index out of the step's range in `spec`: a request's for
// the steps about one request, a gate's for check_at_gate, 0 for the steps that take none.
// A step that came from another process indexes nothing before it passed this.
void check_step_index(const scenarios::scenario_spec& spec, transfer_step step, std::size_t r);

// Runs `step` on the actor; throws real_backend_error for a step of the other rank.
std::string run_step(prefill_actor& prefill, transfer_step step, std::size_t r);
std::string run_step(decode_actor& decode, transfer_step step, std::size_t r);

}  // namespace kvsim::real
