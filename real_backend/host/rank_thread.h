#pragma once
// One rank's owner thread (core/owner_thread.h): the rank's objects are built on it, its core
// components are bound to it there, and only it calls them. Other threads (the scenario
// script) hand it work as messages: call() runs a function on the owner and returns its
// result; watch() has the owner say, through a step_signal, when a condition on its state
// holds. Between messages the owner runs its rank's event loop, `Rank::step()` (its control
// messages, its transfers' completions), then waits for new work, at most `idle`: the loop
// polls its own endpoints, nobody else's.
//
// When the owner fails (an exception out of the rank's constructor, its step or a watched
// condition; a call's own exception goes back to its caller instead), the loop ends: the
// rank is destroyed on its thread, every waiting call and watch is released and finds the
// failure, and so does every later one. Stopping ends it the same way.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "real_backend/errors.h"
#include "real_backend/host/step_signal.h"

namespace kvsim::real {

template <class Rank>
class rank_thread {
 public:
  using clock_type = std::chrono::steady_clock;
  using factory = std::function<std::unique_ptr<Rank>()>;

  // Starts the thread; `make` runs on it, so whatever the rank builds is built by its owner.
  rank_thread(std::string name, factory make, std::chrono::microseconds idle)
      : name_(std::move(name)),
        idle_(idle),
        thread_([this, make = std::move(make)] { run(make); }) {}
  ~rank_thread() { stop(); }
  rank_thread(const rank_thread&) = delete;
  rank_thread& operator=(const rank_thread&) = delete;

  const std::string& name() const { return name_; }

  // Runs `work(rank)` on the owner thread, after the work handed over before it, and returns
  // its result (or rethrows its exception). Throws the owner's failure when the thread has
  // ended, and real_backend_error when it has not answered by `deadline`.
  template <class Work>
  std::invoke_result_t<Work&, Rank&> call(Work work, clock_type::time_point deadline) {
    using result = std::invoke_result_t<Work&, Rank&>;
    auto task = std::make_shared<std::packaged_task<result(Rank&)>>(std::move(work));
    std::future<result> answer = task->get_future();
    // The task lives in the posted work only: dropped unrun, it breaks `answer` at once.
    post([task = std::move(task)](Rank& rank) { (*task)(rank); });
    if (answer.wait_until(deadline) != std::future_status::ready) {
      rethrow_if_failed();
      throw real_backend_error(name_ + " did not answer the script in time");
    }
    try {
      return answer.get();
    } catch (const std::future_error&) {  // dropped unrun: the thread ended
      rethrow_if_failed();
      throw;
    }
  }

  // Sets `done` once `condition(rank)` holds, checked on the owner thread after every turn of
  // its loop (a condition may act, e.g. retry an allocation; it must not call a rank_thread).
  // A watch whose signal is set by someone else (the script waited for either of two ranks,
  // or gave up) is dropped. When the thread ends, `done` is set: the waiter finds the failure.
  void watch(std::function<bool(Rank&)> condition, std::shared_ptr<step_signal> done) {
    {
      const std::lock_guard lock(mutex_);
      if (!ended_) {
        watches_.push_back({std::move(condition), std::move(done)});
        nudged_ = true;
        changed_.notify_all();
        return;
      }
    }
    done->set();
  }

  // Rethrows why the thread ended (its failure, or "stopped"); nothing while it runs.
  void rethrow_if_failed() const {
    std::exception_ptr failure;
    {
      const std::lock_guard lock(mutex_);
      failure = failure_;
    }
    if (failure) std::rethrow_exception(failure);
  }

  // Ends the loop after its current turn, destroys the rank on its thread, joins.
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  using posted_work = std::function<void(Rank&)>;
  struct watch_entry {
    std::function<bool(Rank&)> condition;
    std::shared_ptr<step_signal> done;
  };

  void post(posted_work w) {
    {
      const std::lock_guard lock(mutex_);
      if (!ended_) {
        queue_.push_back(std::move(w));
        nudged_ = true;
        changed_.notify_all();
        return;
      }
    }
    // Ended: `w` is dropped here, and with it the caller's promise.
  }

  void run(const factory& make) {
    std::exception_ptr failure;
    try {
      std::unique_ptr<Rank> rank = make();
      try {
        while (turn(*rank)) {
        }
      } catch (...) {
        failure = std::current_exception();
      }
      rank.reset();  // on its owner thread, like everything it holds
    } catch (...) {
      failure = std::current_exception();
    }
    end(failure);
  }

  // One turn: the work handed over, the rank's own step, the watches; then a wait for more
  // work, at most `idle`. False once stopped.
  bool turn(Rank& rank) {
    std::deque<posted_work> posted;
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return false;
      posted.swap(queue_);
      nudged_ = false;
    }
    for (posted_work& w : posted) w(rank);  // a call's exception is kept for its caller
    rank.step();
    check_watches(rank);
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, idle_, [this] { return stopping_ || nudged_; });
    return !stopping_;
  }

  void check_watches(Rank& rank) {
    // Under the lock: a condition that throws leaves every watch in place for end() to set.
    const std::lock_guard lock(mutex_);
    for (auto it = watches_.begin(); it != watches_.end();) {
      if (it->done->is_set() || it->condition(rank)) {
        it->done->set();
        it = watches_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void end(std::exception_ptr failure) {
    std::deque<posted_work> dropped;
    std::vector<watch_entry> waiting;
    {
      const std::lock_guard lock(mutex_);
      ended_ = true;
      failure_ =
          failure ? failure : std::make_exception_ptr(real_backend_error(name_ + " has stopped"));
      dropped.swap(queue_);
      waiting.swap(watches_);
    }
    for (watch_entry& w : waiting) w.done->set();
  }

  std::string name_;
  std::chrono::microseconds idle_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<posted_work> queue_;
  std::vector<watch_entry> watches_;
  bool nudged_ = false;
  bool stopping_ = false;
  bool ended_ = false;
  std::exception_ptr failure_;
  std::thread thread_;  // last: everything above exists before the thread starts
};

}  // namespace kvsim::real
