#pragma once
// What a decode rank's engine does with a request once its KV arrived (the scenario's
// `engine` block): the request runs its forward passes on its pages (each reads every page, so
// a page overwritten under it is found in its bytes), may be preempted at a step the search
// picks while another request waits for pages on the rank (its pages stored out first when the
// engine offloads), resumes as the next generation of its room on fresh pages in its arrival
// turn (recomputing them), and at its end may have its pages written back by a store job. Every
// ownership decision is the core's (core/running_requests.h); the store jobs run on the rank's
// simulated store engine, whose completions the rank's event loop hands to the core.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/running_requests.h"
#include "scenarios/rank_batch.h"
#include "sim/kv_memory.h"
#include "sim/sim_store_engine.h"
#include "sim/world.h"
#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

class decode_run {
 public:
  struct rank_view {
    sim::world& world;
    const engine_spec& engine;
    core::running_requests& running;
    sim::kv_memory& memory;
    sim::sim_store_engine& store;
    rank_batch* batch;  // null when the rank serves one request at a time
    // The rank's event loop and one poll's wait: what a request does while it waits its turn.
    std::function<void()> idle;
  };

  explicit decode_run(rank_view rank) : rank_(std::move(rank)) {}

  // Request `r` (its transfer done, as `key`, on `pages`) runs here until it finished. Its
  // resumed incarnations are the next generations of its room (engine_spec::generation_stride
  // leaves them free).
  void run(std::size_t r, core::room_key key, std::vector<core::page_index> pages);
  // The event loop's share: every store completion the transport reported, to the core.
  void deliver_store_completions();
  // Store jobs still running, or completions not yet delivered.
  bool stores_outstanding() const { return rank_.store.outstanding() > 0; }

 private:
  bool preempts_now(std::uint32_t preemptions, std::uint32_t steps_left) const;
  // Preempts `key` and waits in `r`'s arrival turn for fresh pages as the next incarnation.
  core::room_key preempt_and_resume(std::size_t r, core::room_key key,
                                    std::vector<core::page_index>& pages);

  rank_view rank_;
};

}  // namespace kvsim::scenarios
