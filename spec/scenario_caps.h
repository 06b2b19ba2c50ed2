#pragma once
// The largest world a scenario may ask for. Every number of a scenario is checked against
// these when it is parsed (spec/scenario_parser.cc), so a catalogue and a trace's inline
// scenario alike are refused with one line before anything is allocated: without them, 10,000
// ranks in a 2 KB file took over 2 GB and 40 s, prefill_ranks 100000 9.8 GB, and
// pages_per_rank 4294967295 ended in std::bad_alloc. scenarios/SCHEMA.md ("Size caps") lists
// them.
//
// Headroom: the catalogue's largest world has 2 ranks a side, 9 requests and 8 pages of 64
// bytes; the scenario generator draws up to 2 x 2 ranks, 4 requests of up to 4 pages in up to
// 4 chunks of 2 siblings, groups of 4 (spec/scenario_draw.h). Each cap is 16 to 250 times
// that. Cost: memory grows with the pages (the simulator allocates, hashes and canary-checks
// every byte) and with steps times pages per request (each step's events list pages); time
// with the bytes the requests move. The worst worlds within every cap, measured on the safe
// core with one seed (Release build): 64 x 64 ranks, 4 requests of 512 pages, 200,000 steps:
// 0.8 GB, 1.9 s; 1,024 requests moving 1 GiB: 0.5 GB, 1.8 s; 256 MiB of pages: 0.3 GB, 0.8 s.
// Before the caps a 2 KB file could ask for a minute and 6 GB per run, and `explore --jobs N`
// holds N worlds at once.
#include <cstddef>
#include <cstdint>

namespace kvsim::scenarios::caps {

// topology.prefill_ranks, topology.decode_ranks, topology.attention_group: each side's ranks.
inline constexpr std::uint32_t ranks_per_side_max = 64;
inline constexpr std::uint32_t pages_per_rank_max = 512;
inline constexpr std::uint32_t page_bytes_max = 1u << 20;  // 1 MiB
// Every rank's pool together: ranks x pages_per_rank x page_bytes, for the ranks the kind
// builds (prefill + decode for transfer, the attention group for prefetch).
inline constexpr std::uint64_t world_bytes_max = std::uint64_t{256} << 20;  // 256 MiB
inline constexpr std::size_t requests_max = 1024;
inline constexpr std::uint32_t siblings_max = 64;  // requests[i].siblings (chunks <= pages)
// Transfer futures a transfer scenario posts: each request's chunks x siblings, from every
// prefill rank to every decode rank. Each is an actor with its own fiber stack (256 KiB), and
// its events go into the trace (32,768 of them made a 65 MB trace).
inline constexpr std::uint64_t transfers_max = 16384;
// KV bytes the requests move: each request's pages x page_bytes, written as canaries, copied
// and verified once per prefill x decode rank pair (transfer) or per group rank (prefetch).
inline constexpr std::uint64_t moved_bytes_max = std::uint64_t{1} << 30;  // 1 GiB
// Scheduling steps: every step is an event or more, in memory and in the trace. The default
// is 20,000.
inline constexpr std::uint64_t step_limit_max = 200'000;
// requests[i].pin.submit_at_us and abort_at_us: 2^40 us, about 12.7 days of virtual time. A
// logged incident spans seconds; below this cap the world's sums of virtual times (a time
// plus waits and bounds) cannot wrap around.
inline constexpr std::uint64_t pinned_time_max_us = std::uint64_t{1} << 40;

}  // namespace kvsim::scenarios::caps
