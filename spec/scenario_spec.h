#pragma once
// A scenario of the catalogue, as data: the world to build (topology), what the clients do
// (workload), what goes wrong (faults), and what the harness expects (the variant that breaks
// it and the invariant that must fire). Loaded from JSON by catalogue.h; the schema is
// documented in scenarios/SCHEMA.md.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/events.h"
#include "core/ids.h"
#include "core/page_ledger.h"
#include "spec/request_pin.h"
#include "spec/fault_kinds.h"

namespace kvsim::scenarios {

using spec::fault_kind;

enum class scenario_kind : std::uint8_t {
  transfer,  // disaggregated KV transfer between prefill and decode ranks (B1..B12)
  prefetch,  // HiCache storage prefetch abort across an attention group (H1..H3)
};

// transfer: what each link's key is bound to (core/link_keys.h).
enum class link_keying : std::uint8_t {
  per_life,  // the pair of ranks and the lives of both ends: a recording from before either
             // end restarted fails its MAC (the simulated ranks and the soak)
  per_pair,  // the pair of ranks only, on a transport that seals each connection, so nothing
             // recorded on an earlier connection arrives on a later one (the real backend)
};

struct topology_spec {
  std::uint32_t prefill_ranks = 1;
  std::uint32_t decode_ranks = 1;
  std::uint32_t attention_group = 2;  // prefetch: ranks in the group
  std::uint32_t pages_per_rank = 8;
  std::uint32_t page_bytes = 64;
  // transfer: each prefill rank's tombstone table (core::room_lifetimes): rooms closed before
  // they opened, or aborted and cleared, remembered so a late sender is refused; a small table
  // fills up and evicts its oldest entries.
  std::uint32_t tombstones = 64;
  // transfer: the order in which every rank's ledger hands out free pages: LIFO (a freed page
  // is the next one taken, so a premature free shows at once) or FIFO (SGLang's allocator
  // shape: a freed page goes to the back of the free list and comes back later).
  core::allocation_order allocation = core::allocation_order::lifo;
  link_keying link_keys = link_keying::per_life;
  // transfer: how many requests each rank's scheduler serves at once. 1: one after another, in
  // the order listed (the seed's worlds). More: each rank admits arrivals in order up to this
  // many live requests, each request's steps interleaving with the others' as a scheduler's
  // ticks over its batch do, and a request waits for pages in the rank's queue when its pool
  // is short.
  std::uint32_t concurrency = 1;
  // transfer: each rank's pool in pages, in rank order (the prefill ranks, then the decode
  // ranks); empty: pages_per_rank for every rank. Ranks of one deployment differ (a decode
  // rank that serves longer contexts, a prefill rank with a larger cache).
  std::vector<std::uint32_t> pages_by_rank;

  std::uint32_t pages_of(core::rank_id rank) const {
    return pages_by_rank.empty() ? pages_per_rank : pages_by_rank[rank];
  }
  // The smallest pool of any rank: a request larger than this could never be served there.
  std::uint32_t smallest_pool() const {
    if (pages_by_rank.empty()) return pages_per_rank;
    std::uint32_t least = pages_by_rank.front();
    for (const std::uint32_t pages : pages_by_rank) least = pages < least ? pages : least;
    return least;
  }

  friend bool operator==(const topology_spec&, const topology_spec&) = default;
};

// Where in a request's life its abort lands.
enum class abort_phase : std::uint8_t {
  before_open,      // the ABORT reaches prefill before the sender for the room exists
  before_transfer,  // after metadata, before any chunk is queued
  during_transfer,  // while a chunk's transfer is in flight
  after_transfer,   // after the last chunk, before decode has seen the end
  anytime,          // the search decides (an abort fault at every opportunity)
  // The ABORT reaches prefill, the request never does: prefill's engine drops a request
  // aborted before admission and never opens its room (decode only, every decode rank).
  before_admission,
};

enum class abort_origin : std::uint8_t {
  decode,   // a client disconnect on decode: ABORT to prefill, drain-ACK back
  prefill,  // a prefill-side failure (B8): decode learns it from the status
};

struct request_spec {
  core::room_id room = 0;                 // generations count up per room automatically
  std::uint32_t pages = 2;
  std::uint32_t chunks = 1;               // chunks the pages are sent in
  std::uint32_t siblings = 1;             // futures per chunk (one per layer group)
  std::optional<abort_phase> abort;       // empty: the request is not aborted
  abort_origin origin = abort_origin::decode;
  std::vector<core::rank_id> abort_from;  // decode ranks that abort (MLA fan-out, B6); empty: all
  std::optional<std::uint32_t> after;     // index of a request that must end before this starts
  std::optional<request_pin> pin;         // a timeline from a log (transfer only); empty: none
  // When the request arrives at every rank, in virtual time (transfer only); empty: at the
  // start. A scenario's `load` block sets it for each request it adds.
  std::optional<std::uint64_t> arrive_at_us;

  friend bool operator==(const request_spec&, const request_spec&) = default;
};

struct fault_spec {
  // Transfer holds (scripted gates): request index, page index it waits before.
  struct gate_spec {
    std::uint32_t request = 0;
    std::uint32_t before_page = 0;

    friend bool operator==(const gate_spec&, const gate_spec&) = default;
  };
  std::vector<gate_spec> gates;
  // Which fault kinds the scenario allows, by kind (spec/fault_kinds.h says what each does
  // and which worlds honour it); abort's switch stays off: a request asks for its abort.
  std::array<bool, spec::fault_kind_count> allowed{};
  bool on(fault_kind kind) const { return allowed[static_cast<std::size_t>(kind)]; }
  void set(fault_kind kind, bool value) { allowed[static_cast<std::size_t>(kind)] = value; }
  std::optional<std::uint64_t> deadline_us;  // decode's abort deadline; empty: none
  // prefetch: each rank's local state when the abort arrives (missing, pending, active).
  std::vector<core::prefetch_state> prefetch_states;

  friend bool operator==(const fault_spec&, const fault_spec&) = default;
};

// transfer: what a decode rank's engine does with a request once its KV arrived
// (core/running_requests.h). The default runs nothing: the request finishes as its transfer
// completes, as in the seed's worlds.
enum class preemption_mode : std::uint8_t {
  none,
  recompute,  // the engine frees a preempted request's pages; it resumes by recomputing
  offload,    // a store job copies the pages out first (vLLM's preemption to CPU offload)
};

// What decode does with a request its pool cannot serve now.
enum class pool_full_policy : std::uint8_t {
  wait,  // it waits its turn in the rank's page queue (SGLang's decode prealloc queue)
  fail,  // the request fails at once: decode rejects it and aborts it on every prefill rank
};

struct engine_spec {
  // Forward passes a request runs on decode after its transfer; each reads its pages.
  std::uint32_t decode_steps = 0;
  bool store_on_finish = false;  // a store job writes the finished request's pages back
  preemption_mode preemption = preemption_mode::none;
  // How often one request may be preempted (each resume is the next generation of its room).
  std::uint32_t preemptions_max = 0;
  std::uint32_t store_jobs_max = 64;                 // core::store_limits
  std::uint32_t store_completions_remembered = 256;  // core::store_limits
  pool_full_policy pool_full = pool_full_policy::wait;

  bool runs_requests() const { return decode_steps > 0 || store_on_finish; }
  // Generations a request's room advances by per request: room keys of one request's
  // incarnations never meet another request's.
  std::uint32_t generation_stride() const { return 1 + preemptions_max; }

  friend bool operator==(const engine_spec&, const engine_spec&) = default;
};

struct expectation_spec {
  std::string breaking_variant;  // "B1".."H3", or "canary" for the deliberately broken core
  std::string invariant;         // "I1".."I9"
  // The damage invariant that shows the bug when only damage checkers run (I1, I5..I9);
  // empty: `invariant` is already one, or the scenario shows the bug by a rule only.
  std::optional<std::string> damage = std::nullopt;

  friend bool operator==(const expectation_spec&, const expectation_spec&) = default;
};

struct scenario_spec {
  std::string name;
  std::string description;
  scenario_kind kind = scenario_kind::transfer;
  topology_spec topology;
  std::vector<request_spec> requests;
  fault_spec faults;
  engine_spec engine;
  expectation_spec expect;
  // Further breaking variants the scenario shows, each with its own invariant(s) (the schema's
  // `expect.also`): one scenario can be red for H1, H2 and H3 alike.
  std::vector<expectation_spec> also_expect;
  // Code probes (spec/probe_names.h) the safe search of this scenario must hit; a safe
  // row that misses one is reported `unexercised`, not clean.
  std::vector<std::string> expect_probes;
  std::uint64_t step_limit = 20'000;
  std::uint64_t heal_bound_us = 10'000;  // I9: after faults stop, every request ends within this

  friend bool operator==(const scenario_spec&, const scenario_spec&) = default;
};

// expect first, then expect.also: every breaking variant the scenario must be red for.
std::vector<expectation_spec> breaking_expectations(const scenario_spec& spec);

const char* to_string(scenario_kind kind);
const char* to_string(abort_phase phase);
const char* to_string(preemption_mode mode);
const char* to_string(pool_full_policy policy);

}  // namespace kvsim::scenarios
