#pragma once
// A rank's scheduler when it serves many requests at once, as an engine's scheduler runs
// ticks over its batch (SGLang's event loop over its running batch and queues, vLLM's
// Scheduler.schedule): requests are admitted in arrival order up to the rank's concurrency,
// and each live request runs as an actor of the rank, so its steps (allocate, publish, poll,
// abort, finish, free) interleave with the other live requests' in whatever order the search
// picks, within one poll period (a tick) and across them. A request that needs pages waits its
// turn in the rank's queue in arrival order, as SGLang's decode prealloc queue and prefill
// waiting queue do: the head retries each tick until its pool can serve it. Arrival order, not
// the order requests happen to ask: ranks that serve the same requests (the decode ranks of a
// fan-out, the prefill ranks of one request) then give their pools to them in the same order,
// as an engine's tensor-parallel ranks do in lockstep; two ranks that each gave a request's
// pages to a different request first would each wait for the other forever.
//
// The requests of a rank are coroutines of one thread: between two of its waits a request runs
// alone among them (a strand), as a scheduler's loop body does, while the network, the
// transfers and the rank's other threads preempt it at every step. The books here (who is
// live, who ended, who waits for pages) are the rank's: every actor that touches them is an
// actor of the rank, whose every step writes the rank (sim/step_log.h).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class rank_batch {
 public:
  // When a request may start on this rank: not before it arrives, and not before each of the
  // requests it comes after ended here.
  struct admission {
    std::optional<std::uint64_t> arrive_at_us;
    std::vector<std::size_t> after;
    bool takes_pages_in_turn = true;  // false: it takes none, or pages named for it (a pin)
  };

  rank_batch(sim::world& w, core::rank_id rank, std::uint32_t concurrency);

  // From the rank's scheduler actor: admits the requests of `order` (indices into the
  // scenario's requests) one after another as `when` allows and a place in the batch frees,
  // runs `serve_one(r)` as the actor "r<rank>.request.<r>", and returns once every admitted
  // request ended here. `after_wait` runs after each of the scheduler's waits (where a rank
  // that died stops).
  void serve(const std::vector<std::size_t>& order,
             const std::function<admission(std::size_t)>& when,
             const std::function<void(std::size_t)>& serve_one,
             const std::function<void()>& after_wait);

  // From request r's actor (admitted with takes_pages_in_turn): waits until no earlier
  // request waits for pages here, then calls `try_take` until it succeeds, with `idle` (the
  // event loop and a poll's wait) between tries; the next request's turn comes once r has
  // its pages, or ended without them.
  void take_pages(std::size_t r, const std::function<bool()>& try_take,
                  const std::function<void()>& idle);

  bool ended(std::size_t r) const { return ended_.contains(r); }
  // Some admitted request waits for pages here (an engine preempts only to make room).
  bool pages_wanted() const { return !page_queue_.empty(); }
  // From request r's actor, after its pages went back (a preemption): r takes pages again in
  // its arrival turn, ahead of later arrivals, as engines put a preempted request back at the
  // front of the waiting queue.
  void rejoin_page_queue(std::size_t r);

 private:
  void request_ended(std::size_t r);
  void leave_page_queue(std::size_t r);

  sim::world& world_;
  core::rank_id rank_;
  std::uint32_t concurrency_;
  // The rank's scheduler thread: its requests' actors run one at a time between their waits
  // (sim::world::spawn_on_strand), so the core, which one thread owns, is never entered by a
  // second request while a port call of the first yields.
  std::uint32_t strand_;
  std::size_t live_ = 0;
  std::set<std::size_t> ended_;
  std::set<std::size_t> page_queue_;  // admitted requests still to take pages, by arrival
  sim::wait_queue changed_;            // the scheduler waits here for a place in the batch
  sim::wait_queue page_turn_;          // requests wait here for the head of the page queue
};

}  // namespace kvsim::scenarios
