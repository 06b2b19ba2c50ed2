#pragma once
// Control messages in flight between the ranks of a scenario script: counted up when a rank
// sends one, down when the receiving rank's owner thread has acted on it (at the end of the
// step that handled it, so that whatever it caused is visible, and whatever it sent is
// already counted). When the count is zero, every rank has heard everything said so far:
// the script waits for that before it decides anything on what a rank has heard (did decode
// end the request, or does it wait for the held transfer?), a handshake where a single host
// thread used to step both ranks in a fixed order.
#include <atomic>
#include <cstdint>
#include <optional>

#include "core/ports.h"
#include "real_backend/wire/tcp_messenger.h"

namespace kvsim::real {

// The count lives in `shared` when given (a word of the data plane's shared memory, so that
// ranks in separate processes count on one tally: script_board.h), else in the tally itself.
class wire_tally {
 public:
  explicit wire_tally(std::int64_t* shared = nullptr) : count_(shared != nullptr ? shared : &own_) {}
  void sent() { counter().fetch_add(1); }
  void handled(std::int64_t messages) { counter().fetch_sub(messages); }
  bool quiet() const { return counter().load() == 0; }

 private:
  std::atomic_ref<std::int64_t> counter() const { return std::atomic_ref<std::int64_t>(*count_); }
  alignas(8) std::int64_t own_ = 0;
  std::int64_t* count_;
};

// A rank's messenger as its core components and script see it: the rank's TCP endpoint,
// every message sent counted on the tally first (before it can possibly be handled).
class tallied_messenger final : public core::messenger {
 public:
  tallied_messenger(tcp_messenger& wire, wire_tally& tally) : wire_(wire), tally_(tally) {}
  void send(core::rank_id to, const core::control_message& message) override {
    tally_.sent();
    wire_.send(to, message);
  }
  core::control_message receive() override { return wire_.receive(); }
  std::optional<core::control_message> try_receive() { return wire_.try_receive(); }

 private:
  tcp_messenger& wire_;
  wire_tally& tally_;
};

}  // namespace kvsim::real
