#pragma once
// The Boost.Fiber scheduling algorithm of a simulated world. Boost calls pick_next() whenever
// the running fiber suspends, yields or ends; we forward it to the world, which decides
// through the decision stream. Boost's own pinned contexts (the thread's main context and
// the dispatcher) are kept aside and only run between runs.
#include <boost/fiber/algo/algorithm.hpp>

#include "sim/world.h"

namespace kvsim::sim {

class scheduling_algorithm final : public boost::fibers::algo::algorithm {
 public:
  explicit scheduling_algorithm(world& w) : world_(w) {}

  void awakened(boost::fibers::context* context) noexcept override { world_.awakened(context); }
  boost::fibers::context* pick_next() noexcept override { return world_.pick_next(); }
  bool has_ready_fibers() const noexcept override;
  // Nothing to wait for in real time: virtual time is advanced by the world itself.
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {}
  void notify() noexcept override {}

 private:
  world& world_;
};

}  // namespace kvsim::sim
