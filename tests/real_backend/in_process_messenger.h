#pragma once
// core::messenger between threads of one process, for tests of the threading contract
// without sockets: one inbox per rank, any thread may send, the owner takes its own.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "core/ports.h"

namespace kvsim::testing {

class in_process_wire {
 public:
  void send(core::rank_id to, const core::control_message& message) {
    {
      const std::lock_guard lock(mutex_);
      inboxes_[to].push_back(message);
    }
    changed_.notify_all();
  }
  // The next message for `self`, or nothing when none came within `within`.
  std::optional<core::control_message> take(core::rank_id self, std::chrono::milliseconds within) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, within, [&] { return !inboxes_[self].empty(); })) {
      return std::nullopt;
    }
    core::control_message message = std::move(inboxes_[self].front());
    inboxes_[self].pop_front();
    return message;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<core::rank_id, std::deque<core::control_message>> inboxes_;
};

class in_process_messenger final : public core::messenger {
 public:
  in_process_messenger(in_process_wire& wire, core::rank_id self) : wire_(wire), self_(self) {}
  void send(core::rank_id to, const core::control_message& message) override {
    wire_.send(to, message);
  }
  core::control_message receive() override {
    if (auto message = wire_.take(self_, std::chrono::seconds(10))) return *message;
    throw std::runtime_error("no message for rank " + std::to_string(self_) + " within 10 s");
  }
  std::optional<core::control_message> take(std::chrono::milliseconds within) {
    return wire_.take(self_, within);
  }

 private:
  in_process_wire& wire_;
  core::rank_id self_;
};

}  // namespace kvsim::testing
