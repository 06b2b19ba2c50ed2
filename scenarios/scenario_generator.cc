#include "scenarios/scenario_generator.h"

#include <algorithm>
#include <string>

#include "sim/rng.h"

namespace kvsim::scenarios {
namespace {

// Small worlds find most bugs (the small-scope hypothesis): up to 2 x 2 transfer ranks, 4
// requests over 3 room ids (so ids are reused), pools of 3..8 pages, groups of up to 4.
constexpr std::uint32_t prefill_ranks_max = 2;
constexpr std::uint32_t decode_ranks_max = 2;
constexpr std::uint32_t requests_max = 4;
constexpr std::uint32_t room_ids = 3;
constexpr std::uint32_t request_pages_max = 4;
constexpr std::uint32_t siblings_max = 2;
constexpr std::uint32_t attention_group_max = 4;

// Separates the scenario's stream from the run's (both start from the seed).
constexpr std::uint64_t scenario_stream = 0x5ce7a210'9e3779b9ULL;

class draw {
 public:
  explicit draw(std::uint64_t seed) : rng_(seed ^ scenario_stream) {}
  std::uint32_t in(std::uint32_t low, std::uint32_t high) { return low + rng_.below(high - low + 1); }
  bool coin() { return rng_.below(2) == 1; }
  bool one_in(std::uint32_t n) { return rng_.below(n) == 0; }

 private:
  sim::rng rng_;
};

abort_phase any_phase(draw& d) {
  return static_cast<abort_phase>(d.in(0, static_cast<std::uint32_t>(abort_phase::anytime)));
}

request_spec transfer_request(draw& d, const topology_spec& topology, std::uint32_t index) {
  request_spec r;
  r.room = d.in(1, room_ids);
  r.pages = d.in(1, std::min(request_pages_max, topology.pages_per_rank));
  r.chunks = d.in(1, r.pages);
  r.siblings = d.in(1, siblings_max);
  // Most requests are aborted: aborts are where the core's mechanisms are.
  if (!d.one_in(3)) {
    r.abort = any_phase(d);
    r.origin = d.one_in(4) ? abort_origin::prefill : abort_origin::decode;
    if (r.origin == abort_origin::decode && topology.decode_ranks > 1 && d.coin()) {
      r.abort_from.push_back(d.in(0, topology.decode_ranks - 1));
    }
  }
  if (index > 0 && d.one_in(3)) r.after = d.in(0, index - 1);
  return r;
}

scenario_spec transfer_scenario(draw& d) {
  scenario_spec s;
  s.kind = scenario_kind::transfer;
  s.topology.prefill_ranks = d.in(1, prefill_ranks_max);
  s.topology.decode_ranks = d.in(1, decode_ranks_max);
  s.topology.pages_per_rank = d.in(3, 8);
  const std::uint32_t requests = d.in(1, requests_max);
  for (std::uint32_t i = 0; i < requests; ++i) s.requests.push_back(transfer_request(d, s.topology, i));
  fault_spec& f = s.faults;
  if (d.one_in(3)) {
    const std::uint32_t request = d.in(0, requests - 1);
    f.gates.push_back({request, d.in(0, s.requests[request].pages - 1)});
  }
  f.transfer_stall = d.coin();
  f.transfer_fail = d.coin();
  f.transfer_timeout_unconfirmed = d.coin();
  f.message_delay = d.coin();
  f.message_duplicate = d.coin();
  f.message_drop = d.coin();
  f.message_replay = d.coin();
  f.message_forge = d.coin();
  if (d.coin()) f.deadline_us = d.in(20, 400);
  s.expect = {"B1", "I3"};  // required by the schema; a generated search expects safe clean
  return s;
}

scenario_spec prefetch_scenario(draw& d) {
  scenario_spec s;
  s.kind = scenario_kind::prefetch;
  s.topology.attention_group = d.in(1, attention_group_max);
  s.topology.pages_per_rank = d.in(2, 8);
  const std::uint32_t requests = d.in(1, requests_max - 1);
  for (std::uint32_t i = 0; i < requests; ++i) {
    request_spec r;
    r.room = d.in(1, room_ids);
    r.pages = d.in(1, s.topology.pages_per_rank);
    if (d.coin()) r.abort = any_phase(d);
    s.requests.push_back(r);
  }
  for (std::uint32_t rank = 0; rank < s.topology.attention_group; ++rank) {
    s.faults.prefetch_states.push_back(static_cast<core::prefetch_state>(d.in(0, 2)));
  }
  s.faults.transfer_stall = d.coin();  // storage reads stall
  s.faults.transfer_fail = d.coin();   // storage reads fail
  s.expect = {"H1", "I5"};
  return s;
}

}  // namespace

scenario_spec generate_scenario(std::uint64_t seed) {
  draw d(seed);
  // Transfer scenarios hold most of the core's mechanisms: three in four.
  scenario_spec s = d.one_in(4) ? prefetch_scenario(d) : transfer_scenario(d);
  s.name = generated_scenario_name;
  s.description = "drawn by kvsim explore --generate from seed " + std::to_string(seed);
  return s;
}

}  // namespace kvsim::scenarios
