#pragma once
// A one-shot signal between threads: the script waits for a step that a rank's owner thread
// takes (real_backend/host/rank_thread.h) instead of sleeping and looking again. Set once, by any
// thread; waited for with a deadline, because a script that waits for a step must be able to
// give up (script_options::patience). std::latch has no timed wait.
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kvsim::real {

class step_signal {
 public:
  void set() {
    {
      const std::lock_guard lock(mutex_);
      set_ = true;
    }
    changed_.notify_all();
  }
  bool is_set() const {
    const std::lock_guard lock(mutex_);
    return set_;
  }
  // True once set; false when `deadline` passed first.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return changed_.wait_until(lock, deadline, [this] { return set_; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

}  // namespace kvsim::real
