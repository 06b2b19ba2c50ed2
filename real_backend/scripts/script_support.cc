#include "real_backend/scripts/script_support.h"

namespace kvsim::real {
namespace {

using spec::fault_kind;

// Faults the scripted run cannot inject (the simulator draws them): stalls, failures,
// timeouts, message faults, deadlines. The adversary's and the careless caller's kinds, peer
// death and late status writes are left out of a scripted run, which runs without them.
bool needs_injected_faults(const scenarios::fault_spec& f) {
  for (const fault_kind kind : {fault_kind::transfer_stall, fault_kind::transfer_fail,
                                fault_kind::transfer_timeout_unconfirmed, fault_kind::message_delay,
                                fault_kind::message_duplicate, fault_kind::message_drop}) {
    if (f.on(kind)) return true;
  }
  return f.deadline_us.has_value();
}

bool has_gate(const scenarios::scenario_spec& spec, std::size_t request) {
  for (const auto& g : spec.faults.gates) {
    if (g.request == request) return true;
  }
  return false;
}

std::optional<std::string> transfer_reason(const scenarios::scenario_spec& spec) {
  const scenarios::fault_spec& f = spec.faults;
  if (spec.topology.prefill_ranks != 1 || spec.topology.decode_ranks != 1) {
    return "the real script runs one prefill and one decode rank";
  }
  if (needs_injected_faults(f)) {
    return "it needs injected faults (stalls, failures, timeouts, message faults or deadlines), "
           "which only the simulator draws";
  }
  for (std::size_t r = 0; r < spec.requests.size(); ++r) {
    const scenarios::request_spec& req = spec.requests[r];
    // The real script takes pages from the ledger's order and aborts on the gate: it would
    // run a pinned request unpinned, not as logged.
    if (req.pin) {
      return "request " + std::to_string(r) +
             " pins its timeline (pin: pages or times from a log), which only the simulator "
             "replays";
    }
    if (!req.abort) {
      if (has_gate(spec, r)) return "a gate holds a request that is never aborted";
      continue;
    }
    if (*req.abort != scenarios::abort_phase::during_transfer ||
        req.origin != scenarios::abort_origin::decode || !has_gate(spec, r)) {
      return "request " + std::to_string(r) +
             "'s abort is not a decode abort while a gate holds its transfer";
    }
    if (req.chunks != 1 || req.siblings != 1) {
      return "request " + std::to_string(r) + " is gated and sent in more than one transfer";
    }
  }
  for (const auto& g : f.gates) {
    if (g.before_page >= spec.requests.at(g.request).pages) {
      return "a gate stands after the last page of request " + std::to_string(g.request) +
             ", so it never holds anything";
    }
  }
  return std::nullopt;
}

std::optional<std::string> prefetch_reason(const scenarios::scenario_spec& spec) {
  const scenarios::fault_spec& f = spec.faults;
  if (needs_injected_faults(f)) {
    return "it needs injected faults, which only the simulator draws";
  }
  if (f.prefetch_states.size() != spec.topology.attention_group) {
    return "it does not give every rank of the group a prefetch state";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> served_at_once_reason(const scenarios::scenario_spec& spec) {
  const scenarios::topology_spec& t = spec.topology;
  if (t.concurrency != 1) {
    return "serves requests at once (topology.concurrency " + std::to_string(t.concurrency) +
           "); the real backend serves them one after another";
  }
  if (!t.pages_by_rank.empty()) {
    return "gives each rank a pool of its own (topology.pages_by_rank); the real backend gives "
           "every rank topology.pages_per_rank pages";
  }
  if (spec.engine != scenarios::engine_spec{}) {
    return "runs requests on decode after their transfer (the engine block: forward passes, "
           "store jobs, preemption); the real backend finishes a request when its transfer "
           "completes";
  }
  for (std::size_t r = 0; r < spec.requests.size(); ++r) {
    if (spec.requests[r].arrive_at_us) {
      return "has requests arrive over time (requests[" + std::to_string(r) +
             "].arrive_at_us, given or added by a load block); the real backend serves them one "
             "after another from the start";
    }
  }
  return std::nullopt;
}

std::optional<std::string> unscripted_reason(const scenarios::scenario_spec& spec) {
  if (auto why = served_at_once_reason(spec)) return why;
  switch (spec.kind) {
    case scenarios::scenario_kind::transfer:
      return transfer_reason(spec);
    case scenarios::scenario_kind::prefetch:
      return prefetch_reason(spec);
  }
  return "unknown scenario kind";
}

std::optional<core::variant> real_variant(std::string_view name) {
  if (name == "canary") return core::variant::with(core::bug::b1_destination_reuse);
  return core::variant::from_name(name);
}

}  // namespace kvsim::real
