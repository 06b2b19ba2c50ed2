#include "scenarios/careless_call.h"

namespace kvsim::scenarios {
namespace {

template <class Outcome>
std::optional<core::ledger_error> refusal_of(const Outcome& outcome) {
  if (outcome) return std::nullopt;
  return outcome.error();
}

}  // namespace

std::optional<core::ledger_error> make_careless_call(core::page_ledger& ledger,
                                                     const sim::misuse_attempted& call) {
  switch (call.call) {
    case sim::ledger_call::allocate:
      return refusal_of(ledger.allocate(call.caller, call.count));
    case sim::ledger_call::lease:
      return refusal_of(ledger.lease(call.caller, call.role, call.pages));
    case sim::ledger_call::release:
      return refusal_of(ledger.release(call.caller, call.pages));
    case sim::ledger_call::end_lease:
      return refusal_of(ledger.end_lease(call.lease));
    case sim::ledger_call::quarantine:
      return refusal_of(ledger.quarantine(call.lease));
    case sim::ledger_call::confirm_quarantine:
      return refusal_of(ledger.confirm_quarantine(call.lease));
    case sim::ledger_call::release_all:
      return refusal_of(ledger.release_all(call.caller));
  }
  return std::nullopt;
}

}  // namespace kvsim::scenarios
