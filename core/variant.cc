#include "core/variant.h"

namespace kvsim::core {
#if KVSIM_HISTORICAL_BUGS
namespace {

struct bug_text {
  const char* name;
  const char* what;
};

constexpr std::array<bug_text, bug_count> texts{{
    {"B1", "decode frees destination pages at abort while prefill still writes them"},
    {"B2", "prefill sends ABORT_ACK on receipt, before its writes stopped"},
    {"B3", "prefill frees source pages on Failed while a worker still reads them"},
    {"B4", "the first failing sibling future returns; its siblings keep running"},
    {"B5", "clearing the room drops the pending ACK target"},
    {"B6", "one ACK target per room: a second decode rank overwrites the first"},
    {"B7", "an ABORT for a cleared room with an outstanding chunk is ACKed too early"},
    {"B8", "failures not initiated by decode release pages at once"},
    {"B9", "the ACK target is registered before the room is marked Failed"},
    {"B10", "an ABORT before open leaves no tombstone; the late sender writes after the ACK"},
    {"B11", "a late ACK for the old request on a reused room releases the new one"},
    {"B12", "a transport deadline releases pages the transfer still writes"},
    {"H1", "missing or pending ranks return before the barrier an active rank enters"},
    {"H2", "host pages released on one rank while a peer is still transferring"},
    {"H3", "a rank-local early return skips the all_reduce its peers enter"},
    {"B13", "a store completion is counted by request id: a preempted incarnation's ends a newer one's"},
    {"B14", "preemption drops the request's store jobs and frees pages they still read"},
    {"B15", "a store job holds no reference: the request's end frees pages it still reads"},
}};

}  // namespace

const char* to_string(bug b) { return texts[static_cast<std::size_t>(b)].name; }
const char* describe(bug b) { return texts[static_cast<std::size_t>(b)].what; }

std::optional<bug> bug_from_string(std::string_view name) {
  for (std::size_t i = 0; i < bug_count; ++i) {
    if (name == texts[i].name) return static_cast<bug>(i);
  }
  return std::nullopt;
}
#endif

std::optional<variant> variant::from_name(std::string_view name) {
  if (name == "safe") return safe();
#if KVSIM_HISTORICAL_BUGS
  if (const auto b = bug_from_string(name)) return with(*b);
#endif
  return std::nullopt;
}

bool variant::is_safe() const {
  for (bool on : on_) {
    if (on) return false;
  }
  return true;
}

std::string variant::name() const {
  if (is_safe()) return "safe";
#if KVSIM_HISTORICAL_BUGS
  std::string text;
  for (std::size_t i = 0; i < bug_count; ++i) {
    if (!on_[i]) continue;
    if (!text.empty()) text += "+";
    text += texts[i].name;
  }
  return text;
#else
  return "safe";  // unreachable: no variant here has a bug on
#endif
}

}  // namespace kvsim::core
