#include "scenarios/rank_batch.h"

#include <algorithm>

#include "sim/sim_assert.h"

namespace kvsim::scenarios {

rank_batch::rank_batch(sim::world& w, core::rank_id rank, std::uint32_t concurrency)
    : world_(w),
      rank_(rank),
      concurrency_(concurrency),
      strand_(rank + 1),
      changed_(w, "a place in rank " + std::to_string(rank) + "'s batch"),
      page_turn_(w, "rank " + std::to_string(rank) + "'s page queue") {
  KVSIM_SIM_ASSERT(concurrency_ > 0, "a rank's batch serves at least one request at a time");
}

void rank_batch::serve(const std::vector<std::size_t>& order,
                       const std::function<admission(std::size_t)>& when,
                       const std::function<void(std::size_t)>& serve_one,
                       const std::function<void()>& after_wait) {
  for (const std::size_t r : order) {
    const admission rule = when(r);
    if (rule.arrive_at_us && world_.now_us() < *rule.arrive_at_us) {
      world_.wait_virtual(*rule.arrive_at_us - world_.now_us());
      after_wait();
    }
    const auto waits_for_another = [&] {
      return std::any_of(rule.after.begin(), rule.after.end(),
                         [&](std::size_t earlier) { return !ended(earlier); });
    };
    while (live_ >= concurrency_ || waits_for_another()) {
      changed_.wait();
      after_wait();
    }
    ++live_;
    if (rule.takes_pages_in_turn) page_queue_.insert(r);
    // serve_one is copied: a rank that dies ends this scheduler while its requests still run.
    world_.spawn_on_strand({rank_, "request", static_cast<std::uint32_t>(r)}, [this, r, serve_one] {
      try {
        serve_one(r);
      } catch (const sim::actor_ended&) {  // the rank died: the request ends with it
        request_ended(r);
        throw;
      }
      request_ended(r);
    }, strand_);
  }
  while (live_ > 0) {
    changed_.wait();
    after_wait();
  }
}

void rank_batch::request_ended(std::size_t r) {
  leave_page_queue(r);
  --live_;
  ended_.insert(r);
  changed_.notify_all();
}

void rank_batch::take_pages(std::size_t r, const std::function<bool()>& try_take,
                            const std::function<void()>& idle) {
  KVSIM_SIM_ASSERT(page_queue_.contains(r), "a request takes pages in turn only if admitted so");
  while (*page_queue_.begin() != r) page_turn_.wait();
  while (!try_take()) idle();
  leave_page_queue(r);
}

void rank_batch::rejoin_page_queue(std::size_t r) {
  KVSIM_SIM_ASSERT(!ended(r) && !page_queue_.contains(r), "a live request rejoins the page queue once");
  page_queue_.insert(r);
}

void rank_batch::leave_page_queue(std::size_t r) {
  const auto it = page_queue_.find(r);
  if (it == page_queue_.end()) return;
  const bool was_head = it == page_queue_.begin();
  page_queue_.erase(it);
  if (was_head) page_turn_.notify_all();
}

}  // namespace kvsim::scenarios
