#pragma once
// How a scenario is drawn from the schema, written once for every source of choices: the
// scenario swarm draws from a seeded spec::rng (scenario_generator.cc), the RapidCheck
// property from RapidCheck's generators (so its failures shrink field by field). `Draw`
// provides in(low, high) (inclusive), coin() and one_in(n).
//
// Small worlds find most bugs (the small-scope hypothesis): up to 2 x 2 transfer ranks, 4
// requests over 3 room ids (so ids are reused), pools of 3..8 pages, groups of up to 4; one
// transfer scenario in three serves up to 8 requests at once, with up to 12 more arriving.
#include <algorithm>
#include <cstdint>

#include "spec/scenario_spec.h"

namespace kvsim::scenarios::drawing {

inline constexpr std::uint32_t prefill_ranks_max = 2;
inline constexpr std::uint32_t decode_ranks_max = 2;
inline constexpr std::uint32_t requests_max = 4;
inline constexpr std::uint32_t room_ids = 3;
inline constexpr std::uint32_t request_pages_max = 4;
inline constexpr std::uint32_t siblings_max = 2;
inline constexpr std::uint32_t attention_group_max = 4;
inline constexpr std::uint32_t concurrency_max = 8;  // a batching scenario's live requests per rank
inline constexpr std::uint32_t load_max = 12;        // arrivals a batching scenario adds

inline constexpr fault_kind drawn_before_deadline[] = {
    fault_kind::transfer_stall,    fault_kind::transfer_fail,     fault_kind::transfer_timeout_unconfirmed,
    fault_kind::message_delay,     fault_kind::message_duplicate, fault_kind::message_drop,
    fault_kind::message_replay,    fault_kind::message_forge};
inline constexpr fault_kind drawn_after_deadline[] = {fault_kind::peer_death, fault_kind::ledger_misuse,
                                                      fault_kind::late_status};

constexpr bool drawn_in_first_order(fault_kind kind) {
  for (const fault_kind k : drawn_before_deadline) {
    if (k == kind) return true;
  }
  for (const fault_kind k : drawn_after_deadline) {
    if (k == kind) return true;
  }
  return false;
}

template <class Draw>
abort_phase any_phase(Draw& d) {
  return static_cast<abort_phase>(d.in(0, static_cast<std::uint32_t>(abort_phase::anytime)));
}

template <class Draw>
request_spec transfer_request(Draw& d, const topology_spec& topology, std::uint32_t index) {
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
    // Aborted before it reached prefill: every decode rank aborts it (the schema's rule).
    if (r.origin == abort_origin::decode && r.abort_from.empty() && d.one_in(6)) {
      r.abort = abort_phase::before_admission;
    }
  }
  if (index > 0 && d.one_in(3)) r.after = d.in(0, index - 1);
  // Never a pin (request_pin): a pin replays a logged timeline, the swarm draws its own.
  return r;
}

// Many requests at once (drawn after everything else, so that a seed still draws the fields
// it drew before): the ranks serve up to `concurrency` requests together, a load of arrivals
// joins the listed requests (reusing their rooms, so generations churn), and each rank gets a
// pool of its own, some too small for the load, so that requests queue for pages.
template <class Draw>
void draw_batch(Draw& d, scenario_spec& s) {
  topology_spec& t = s.topology;
  t.concurrency = d.in(2, concurrency_max);
  const std::uint32_t gap_us = d.in(0, 3);
  const std::uint32_t arrivals = d.in(0, load_max);
  for (std::uint32_t i = 0; i < arrivals; ++i) {
    request_spec r;
    r.room = d.in(1, room_ids);
    r.pages = d.in(1, std::min(request_pages_max, t.pages_per_rank));
    r.arrive_at_us = std::uint64_t{gap_us} * i;
    if (d.coin()) r.abort = any_phase(d);
    s.requests.push_back(r);
  }
  // The tombstone table keeps the sizing rule drawn above: an entry for every abort that can
  // land between an ABORT and its room's open. Served at once, a request can wait long for
  // its open (behind earlier requests in the page queue), and any request can be aborted (a
  // dead prefill rank aborts every request it served): an entry per request.
  t.tombstones = std::max(t.tombstones, static_cast<std::uint32_t>(s.requests.size()));
  std::uint32_t largest = 1;
  for (const request_spec& r : s.requests) largest = std::max(largest, r.pages);
  if (d.coin()) {
    for (std::uint32_t rank = 0; rank < t.prefill_ranks + t.decode_ranks; ++rank) {
      t.pages_by_rank.push_back(d.in(largest, largest + t.pages_per_rank));
    }
  }
}

// An engine that runs requests after their transfer (drawn after the batch, for the same
// reason): forward passes, write-backs, and, where a rank serves several requests at once,
// preemption with or without an offload; now and then store tables small enough to fill and
// evict.
template <class Draw>
void draw_engine(Draw& d, scenario_spec& s) {
  engine_spec& e = s.engine;
  e.decode_steps = d.in(1, 4);
  e.store_on_finish = d.coin();
  if (s.topology.concurrency > 1 && e.decode_steps >= 2 && d.coin()) {
    e.preemption = d.coin() ? preemption_mode::offload : preemption_mode::recompute;
    e.preemptions_max = d.in(1, 2);
  }
  if (d.coin()) {
    e.store_jobs_max = d.in(1, 4);
    e.store_completions_remembered = d.in(1, 4);
  }
  if (d.one_in(4)) {
    // Any request can now be failed, so aborted before its room opens: the tombstone table
    // keeps an entry per request (core/room_lifetimes.h's sizing rule, as draw_batch does).
    e.pool_full = pool_full_policy::fail;
    s.topology.tombstones =
        std::max(s.topology.tombstones, static_cast<std::uint32_t>(s.requests.size()));
  }
}

template <class Draw>
scenario_spec transfer_scenario(Draw& d) {
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
  // Each switch the transfer world honours is on or off by a coin, in the order earlier
  // swarms drew them (so that a seed still draws the scenario it drew then); the deadline sits
  // among them for the same reason, and kinds added to spec/fault_kinds.h since come last.
  for (const fault_kind kind : drawn_before_deadline) f.set(kind, d.coin());
  if (d.coin()) f.deadline_us = d.in(20, 400);
  for (const fault_kind kind : drawn_after_deadline) f.set(kind, d.coin());
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (!row.scenario_key.empty() && (row.worlds & spec::transfer_world) != 0 &&
        !drawn_in_first_order(row.kind)) {
      f.set(row.kind, d.coin());
    }
  }
  // Drawn after every field above, for the same reason: bounded tables that fill and evict,
  // and the other allocation order. A tombstone table is sized as core/room_lifetimes.h
  // asks (no fewer entries than aborts that can land within one ABORT-to-open delay: here
  // every aborted request), so that a full table evicts only what no late sender needs. A
  // one-entry table under two aborts lets a cleared room's tombstone evict a close-before-open
  // one, and the late sender in: the swarm found that (5 of 100,000 scenarios); the core
  // issue about bounded tables owns it.
  if (d.one_in(3)) {
    const auto aborted = static_cast<std::uint32_t>(
        std::count_if(s.requests.begin(), s.requests.end(),
                      [](const request_spec& r) { return r.abort.has_value(); }));
    s.topology.tombstones = std::max<std::uint32_t>(1, aborted) + d.in(0, 2);
  }
  if (d.coin()) s.topology.allocation = core::allocation_order::fifo;
  if (d.one_in(3)) draw_batch(d, s);
  if (d.one_in(3)) draw_engine(d, s);
  s.expect.breaking_variant = "B1";  // required by the schema; a drawn scenario expects safe clean
  s.expect.invariant = "I3";
  return s;
}

template <class Draw>
scenario_spec prefetch_scenario(Draw& d) {
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
  // The kinds the prefetch world honours (storage reads stall or fail), in the table's order.
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (!row.scenario_key.empty() && (row.worlds & spec::prefetch_world) != 0) s.faults.set(row.kind, d.coin());
  }
  s.expect.breaking_variant = "H1";
  s.expect.invariant = "I5";
  return s;
}

// One scenario: transfer scenarios hold most of the core's mechanisms, three in four.
template <class Draw>
scenario_spec draw_scenario(Draw& d) {
  return d.one_in(4) ? prefetch_scenario(d) : transfer_scenario(d);
}

}  // namespace kvsim::scenarios::drawing
