#include "real_backend/scripts/transfer_steps.h"

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

std::string yes(bool b) { return b ? "1" : "0"; }

[[noreturn]] void not_mine(transfer_step step, const char* rank) {
  throw real_backend_error("the " + std::string(rank) + " rank has no step '" +
                           std::string(to_string(step)) + "'");
}

}  // namespace

std::string run_step(prefill_actor& p, transfer_step step, std::size_t r) {
  switch (step) {
    case transfer_step::open_request: return yes(p.open_request(r));
    case transfer_step::send_when_published: return yes(p.send_when_published(r));
    case transfer_step::check_at_gate: return yes(p.check_at_gate(r));
    case transfer_step::hold: p.hold(r); return "1";
    case transfer_step::saw_abort: return yes(p.saw_abort(r));
    case transfer_step::open_held_gates: p.open_held_gates(); return "1";
    case transfer_step::over: return yes(p.over(r));
    case transfer_step::all_over: return yes(p.all_over());
    default: not_mine(step, "prefill");
  }
}

std::string run_step(decode_actor& d, transfer_step step, std::size_t r) {
  switch (step) {
    case transfer_step::wire_quiet: return yes(d.wire_quiet());
    case transfer_step::ended: return yes(d.ended(r));
    case transfer_step::aborting: return yes(d.aborting(r));
    case transfer_step::prealloc_and_publish: return yes(d.prealloc_and_publish(r));
    case transfer_step::abort: d.abort(r); return "1";
    case transfer_step::all_ended: return yes(d.all_ended());
    case transfer_step::counted_text: return d.counted_text(r);
    default: not_mine(step, "decode");
  }
}

}  // namespace kvsim::real
