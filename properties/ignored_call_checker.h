#pragma once
// The engine-facing core against a careless caller (fault `misuse`): a call the core must
// ignore (sim::ignored_call_attempted .. ignored_call_answered: decode's abort or complete of a
// request that is not transferring, a second prealloc of a registered request, send_chunk for
// an unknown or closed room, with page lists of different lengths or with no sibling) is
// answered "not accepted" and decides nothing on its rank but a refusal of the room table
// (lifetime_refused). A second client cancel that re-arms an abort, a completion racing an
// abort that frees the pages the drain still waits on, a chunk queued with a page list cut to
// fit: each is a decision inside the bracket, and is found here before its damage shows.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class ignored_call_checker : public sim::checker {
 public:
  const char* name() const override { return "ignored_call"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  struct open_call {
    sim::ignored_call_attempted call;
    std::vector<std::size_t> evidence;
    std::vector<std::string> decisions;  // what the core decided inside, refusals aside
  };
  std::optional<open_call> open_;
};

}  // namespace kvsim::properties
