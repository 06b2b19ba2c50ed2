#pragma once
// The simulator's test world: two ranks (prefill rank 0, decode rank 1), one collective
// group, one transfer, one abort. Request A (room 7, generation 0) moves its KV pages from
// prefill to decode; decode may abort it right after publishing its destination pages (an
// abort fault); then request B reuses room id 7 (generation 1) on decode, and both ranks
// agree on A's status with all_reduce(MIN) and meet at a barrier.
//
// Three planted bugs prove the simulator and its checkers against real findings:
//  - release_before_drain: decode frees A's destination pages as soon as it sends ABORT
//    (DOMAIN.md B1/B2) instead of after prefill's drain-ACK; LIFO hands them to B while A's
//    transfer may still write them: a use-after-free (I1) and foreign bytes in B (I7);
//  - skip_final_barrier: decode skips the barrier prefill enters (I5, a deadlock);
//  - leak_request_b: decode never releases B's pages (I8).
#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "sim/search/strategy.h"
#include "sim/world.h"

namespace kvsim::scenarios {

struct two_rank_options {
  bool release_before_drain = false;
  bool skip_final_barrier = false;
  bool leak_request_b = false;
  std::uint32_t pages_per_request = 2;
  std::uint32_t requests = 1;  // rounds of (A, B) back to back; >1 for benchmarks
  std::uint32_t pool_pages = 4;
  std::uint32_t page_bytes = 64;
  std::uint64_t step_limit = 5'000;
};

class two_rank_abort_world {
 public:
  // The fault profile is drawn from `seed` (swarm): aborts, message delays and duplicates,
  // transfer stalls.
  two_rank_abort_world(sim::strategy& chooser, std::uint64_t seed, two_rank_options options);
  ~two_rank_abort_world();

  sim::world& world();
  sim::run_outcome run();
  // The scenario as it goes into a trace header.
  nlohmann::json describe() const;

 private:
  struct parts;
  std::unique_ptr<parts> parts_;
};

}  // namespace kvsim::scenarios
