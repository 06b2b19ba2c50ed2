#pragma once
// The steps a transfer script hands its two ranks, by name (transfer_steps.h runs them), and
// the check of a step's index against the scenario. Apart from the actors that run the steps,
// so that what parses a step from another process (script_request.h) needs the scenario's
// shape only: the fuzz target of step frames and step lines builds it alone (tests/fuzz).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "spec/scenario_spec.h"

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

}  // namespace kvsim::real
