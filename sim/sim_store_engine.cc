#include "sim/sim_store_engine.h"

#include <iterator>
#include <utility>

#include "sim/sim_assert.h"
#include "sim/step_log.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t store_stall_us = 20;
// A page's copy out takes 0, 5 or 10 us of virtual time, as the search picks: a store runs
// beside the rank's forward passes (a step is 5 us), sometimes ahead of them, sometimes behind.
constexpr std::uint64_t store_page_us = 5;
constexpr std::uint32_t store_paces = 3;
constexpr std::uint64_t which_job_tag = 0x5707e;
constexpr std::uint64_t store_pace_tag = 0x5707f;

}  // namespace

sim_store_engine::sim_store_engine(world& w, core::rank_id rank, kv_memory& device)
    : world_(w), rank_(rank), device_(device) {}

std::uint64_t sim_store_engine::object() const {
  return object_token(object_kind::store_jobs, rank_);
}

void sim_store_engine::submit(core::store_job_id job, core::room_key owner,
                              const std::vector<core::page_index>& pages) {
  world_.touch(object(), access::write);
  KVSIM_SIM_ASSERT(!pages.empty(), "a store job reads at least one page");
  const bool fresh = in_flight_.emplace(job, job_record{owner, pages, 0}).second;
  KVSIM_SIM_ASSERT(fresh, "a store job id is submitted once");
  if (!serving_) {
    serving_ = true;
    // The store actor declares what it touches (the engine's books, each page it reads).
    world_.spawn(actor_name{rank_, "store", actors_spawned_++}, [this] { serve(); }, world::no_home);
  }
}

void sim_store_engine::serve() {
  world_.touch(object(), access::read);
  while (!in_flight_.empty()) {
    world_.step();
    world_.touch(object(), access::write);
    const std::size_t pick =
        in_flight_.size() == 1
            ? 0
            : world_.choose(which_job_tag, static_cast<std::uint32_t>(in_flight_.size()));
    const auto it = std::next(in_flight_.begin(), static_cast<std::ptrdiff_t>(pick));
    const core::store_job_id job = it->first;
    if (it->second.read == it->second.pages.size()) {
      end(job, true);
      continue;
    }
    if (world_.fault(fault_kind::transfer_stall)) {
      world_.wait_virtual(store_stall_us);
      world_.touch(object(), access::write);  // a new step after the wait
    }
    if (world_.fault(fault_kind::transfer_fail)) {
      end(job, false);
      continue;
    }
    if (const std::uint32_t pace = world_.choose(store_pace_tag, store_paces); pace > 0) {
      world_.wait_virtual(pace * store_page_us);
      world_.touch(object(), access::write);
    }
    job_record& now = in_flight_.at(job);
    const std::uint32_t logical = now.read++;
    // What the store keeps under the owner's key is what the page holds now.
    (void)device_.verify(now.pages[logical], now.owner, logical);
    world_.touch(object(), access::read);  // in_flight_, for the loop's test
  }
  world_.touch(object(), access::write);
  serving_ = false;
}

void sim_store_engine::end(core::store_job_id job, bool stored) {
  world_.touch(object(), access::write);
  const auto node = in_flight_.extract(job);
  completed_.push_back({job, node.mapped().owner, stored});
}

std::vector<sim_store_engine::completion> sim_store_engine::take_completions() {
  world_.touch(object(), access::write);
  return std::exchange(completed_, {});
}

std::size_t sim_store_engine::outstanding() const {
  world_.touch(object(), access::read);
  return in_flight_.size() + completed_.size();
}

}  // namespace kvsim::sim
