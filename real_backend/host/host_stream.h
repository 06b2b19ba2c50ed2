#pragma once
// A "stream" of the host data plane: one worker thread that runs the operations queued on
// it in order (page copies, gate waits, storage reads), as a CUDA stream runs its work. The
// copies therefore really run beside the rank that queued them, and a gate queued in front
// of a copy really holds it. Tickets say what has run: mark() after queueing, done(ticket)
// or wait_for(ticket) later.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace kvsim::real {

class host_stream {
 public:
  host_stream();
  ~host_stream();  // runs what is queued, then ends the worker
  host_stream(const host_stream&) = delete;
  host_stream& operator=(const host_stream&) = delete;

  void enqueue(std::function<void()> op);
  std::uint64_t mark();  // done once every operation queued so far has run
  bool done(std::uint64_t ticket);
  bool idle();  // nothing queued or running
  void wait_for(std::uint64_t ticket);
  void wait_idle();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  std::uint64_t enqueued_ = 0;
  std::uint64_t completed_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // last: everything above exists before it starts
};

}  // namespace kvsim::real
