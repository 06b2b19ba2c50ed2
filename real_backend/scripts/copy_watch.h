#pragma once
// What prefill's data plane has seen of each request's copies: submitted and not yet seen to
// end (the engine's poll, from the copy workers or CUDA events), and whether a drain-ACK for
// the request has gone out. The I2 check reads this, never the core's own account of itself
// (drain_ack_sent's room_closed and in_flight fields): a drain-ACK sent while a copy of the
// request is still running, or a copy submitted after the drain-ACK, is I2 as the data plane
// saw it. Thread-safe: updated by prefill's thread, read inside event_log::emit.
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

#include "core/ids.h"

namespace kvsim::real {

class copy_watch {
 public:
  // A copy of `owner` was handed to the engine; true when its drain-ACK had already gone out.
  bool submitted(core::room_key owner) {
    const std::lock_guard lock(mutex_);
    ++running_[owner];
    return acked_.contains(owner);
  }
  void ended(core::room_key owner) {
    const std::lock_guard lock(mutex_);
    if (auto it = running_.find(owner); it != running_.end() && it->second > 0) --it->second;
  }
  // A drain-ACK for `owner` went out: the copies of it still running then.
  std::uint32_t acked(core::room_key owner) {
    const std::lock_guard lock(mutex_);
    acked_.insert(owner);
    const auto it = running_.find(owner);
    return it == running_.end() ? 0 : it->second;
  }

 private:
  std::mutex mutex_;
  std::map<core::room_key, std::uint32_t> running_;
  std::set<core::room_key> acked_;
};

}  // namespace kvsim::real
