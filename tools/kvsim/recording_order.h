#pragma once
// The order of a run's core decisions, as a recording from real hardware and a simulator run
// can both state it, and how well a simulator run follows a recording's. A core decision is
// named by its rank, its kind and its request ("rank 1 page_freed room 42/gen 0"): page
// indices, lease ids and nonces are left out, since a real run draws them differently (token
// epochs are random) while the decision is the same one.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/sim_events.h"

namespace kvsim::tools {

// The name of one core decision from core::describe's line ("rank R kind [room X/gen G]...").
std::string core_decision_name(std::string_view described);

// The core decisions of a trace's readable event log ("... core_decided <describe>"), in order.
std::vector<std::string> core_order(const std::vector<std::string>& event_lines);
// The core decisions of a simulator run, in order.
std::vector<std::string> core_order(const std::vector<sim::sim_event>& events);

struct order_fit {
  std::size_t recorded = 0;  // core decisions in the recording
  std::size_t agreed = 0;    // the run's first ones, exactly as the recording's first ones
  std::size_t followed = 0;  // of the run's, taken in the recorded order (longest common subsequence)
  std::size_t own = 0;       // of the run's, not: out of order, or absent from the recording

  // Better: agreed longer with the recording from its start (where two ranks' decisions
  // interleave, the recorded interleaving first), then fewer of its own (nothing the recording
  // contradicts), then more followed (further along the recording).
  bool better_than(const order_fit& other) const {
    if (agreed != other.agreed) return agreed > other.agreed;
    return own != other.own ? own < other.own : followed > other.followed;
  }
  bool operator==(const order_fit&) const = default;
};

order_fit fit(const std::vector<std::string>& recorded, const std::vector<std::string>& run);

}  // namespace kvsim::tools
