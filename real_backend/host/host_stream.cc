#include "real_backend/host/host_stream.h"

namespace kvsim::real {

host_stream::host_stream() : worker_([this] { run(); }) {}

host_stream::~host_stream() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void host_stream::enqueue(std::function<void()> op) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(op));
    ++enqueued_;
  }
  changed_.notify_all();
}

std::uint64_t host_stream::mark() {
  const std::lock_guard lock(mutex_);
  return enqueued_;
}

bool host_stream::done(std::uint64_t ticket) {
  const std::lock_guard lock(mutex_);
  return completed_ >= ticket;
}

bool host_stream::idle() {
  const std::lock_guard lock(mutex_);
  return completed_ == enqueued_;
}

void host_stream::wait_for(std::uint64_t ticket) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this, ticket] { return completed_ >= ticket; });
}

void host_stream::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return completed_ == enqueued_; });
}

void host_stream::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    std::function<void()> op = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    op();
    lock.lock();
    ++completed_;
    changed_.notify_all();
  }
}

}  // namespace kvsim::real
