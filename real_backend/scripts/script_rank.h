#pragma once
// One rank as a transfer script sees it: steps asked (run once, answered) or watched (a
// condition that signals when it holds). local_rank hands them to a rank thread of this
// process; remote_rank (remote_rank.h) to a rank process over its step channel.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "real_backend/host/rank_thread.h"
#include "real_backend/host/step_signal.h"
#include "real_backend/scripts/transfer_steps.h"

namespace kvsim::real {

class script_rank {
 public:
  using clock_type = std::chrono::steady_clock;
  virtual ~script_rank() = default;
  // Runs `step` once on the rank's owner thread and returns its answer.
  virtual std::string ask(transfer_step step, std::size_t r, clock_type::time_point deadline) = 0;
  // Sets `done` once `step` answers "1" (checked after every turn of the rank's loop). A
  // watch whose signal someone else set is dropped.
  virtual void watch(transfer_step step, std::size_t r, std::shared_ptr<step_signal> done) = 0;
  // Why the rank stopped, thrown; nothing while it runs.
  virtual void rethrow_if_failed() = 0;
};

template <class Actor>
class local_rank final : public script_rank {
 public:
  explicit local_rank(rank_thread<Actor>& thread) : thread_(thread) {}
  std::string ask(transfer_step step, std::size_t r, clock_type::time_point deadline) override {
    return thread_.call([step, r](Actor& a) { return run_step(a, step, r); }, deadline);
  }
  void watch(transfer_step step, std::size_t r, std::shared_ptr<step_signal> done) override {
    thread_.watch([step, r](Actor& a) { return run_step(a, step, r) == "1"; }, std::move(done));
  }
  void rethrow_if_failed() override { thread_.rethrow_if_failed(); }

 private:
  rank_thread<Actor>& thread_;
};

}  // namespace kvsim::real
