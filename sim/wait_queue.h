#pragma once
// A sim-owned wait queue: actors that wait here are blocked in the world with a readable
// reason, so the world always knows who waits on what (and a deadlock names it).
#include <string>
#include <vector>

#include "sim/world.h"

namespace kvsim::sim {

class wait_queue {
 public:
  wait_queue(world& w, std::string reason)
      : wait_queue(w, std::move(reason), w.new_object(object_kind::wait_queue)) {}
  // With a token of the caller's (a queue created mid-run, named by what it belongs to).
  wait_queue(world& w, std::string reason, std::uint64_t object)
      : world_(w), reason_(std::move(reason)), object_(object) {}

  // Blocks the current actor until notified (or the deadline passes: then true).
  bool wait(std::optional<std::uint64_t> deadline_us = std::nullopt) {
    return wait(wait_reason{wait_kind::queue, reason_.c_str(), 0, 0, 0}, deadline_us);
  }
  bool wait(const wait_reason& reason, std::optional<std::uint64_t> deadline_us = std::nullopt) {
    // Joining the waiters and leaving them commute with other waiters joining and leaving
    // (the list is a set: wakes land in the ready list, which is ordered by id); a notify
    // reads who waits, so it is ordered against both.
    world_.touch(object_, access::update);
    waiters_.push_back(world_.current());
    const bool timed_out = world_.block(reason, deadline_us);
    world_.touch(object_, access::update);
    std::erase(waiters_, world_.current());
    return timed_out;
  }
  void notify_all() {
    // With nobody waiting, a notify changes nothing: a read (two such notifies commute, and
    // one still orders against a wait that registers).
    world_.touch(object_, waiters_.empty() ? access::read : access::write);
    for (actor_id waiter : waiters_) world_.wake(waiter);
  }
  bool empty() const {
    world_.touch(object_, access::read);
    return waiters_.empty();
  }

 private:
  world& world_;
  std::string reason_;
  std::uint64_t object_;           // step_log.h: waiting and notifying both write it
  std::vector<actor_id> waiters_;  // in arrival order
};

// A scripted gate: a scenario holds work (a transfer's next page) until it opens the gate,
// which is how the seed's "blocked transfer of page 42" is expressed without sleeps.
class gate {
 public:
  gate(world& w, std::string name)
      : world_(w), name_(std::move(name)), object_(w.new_object(object_kind::gate)), waiters_(w, "gate " + name_) {}

  void open() {
    world_.touch(object_, open_ ? access::read : access::write);
    if (open_) return;
    open_ = true;
    world_.emit(gate_changed{name_, true});
    waiters_.notify_all();
  }
  void pass() {
    for (;;) {
      world_.touch(object_, access::read);
      if (open_) return;
      waiters_.wait();
    }
  }
  bool is_open() const {
    world_.touch(object_, access::read);
    return open_;
  }
  bool has_waiters() const { return !waiters_.empty(); }
  const std::string& name() const { return name_; }

 private:
  world& world_;
  std::string name_;
  std::uint64_t object_;
  bool open_ = false;
  wait_queue waiters_;
};

}  // namespace kvsim::sim
