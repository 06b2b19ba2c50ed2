#pragma once
// Hand-driven ports for testing the core's protocol components without the simulator: a
// transfer engine whose outcomes the test sets, a messenger that records what was sent, and
// a clock the test moves.
#include <cstdint>
#include <map>
#include <vector>

#include "core/ports.h"

namespace kvsim::testing {

class fake_transfers : public core::transfer_engine {
 public:
  core::transfer_handle submit(const core::transfer_request& request) override {
    submitted.push_back(request);
    state[next] = core::transfer_poll::in_flight;
    return next++;
  }
  core::transfer_poll poll(core::transfer_handle handle) override { return state.at(handle); }
  bool cancel(core::transfer_handle) override { return false; }

  void end(core::transfer_handle handle, core::transfer_poll outcome) { state[handle] = outcome; }
  void end_all(core::transfer_poll outcome) {
    for (auto& [handle, s] : state) s = outcome;
  }

  std::vector<core::transfer_request> submitted;
  std::map<core::transfer_handle, core::transfer_poll> state;
  core::transfer_handle next = 1;
};

class fake_messenger : public core::messenger {
 public:
  struct sent_message {
    core::rank_id to = 0;
    core::control_message message;
  };
  void send(core::rank_id to, const core::control_message& message) override {
    sent.push_back({to, message});
  }
  core::control_message receive() override { return {}; }

  std::vector<sent_message> of_kind(core::control_kind kind) const {
    std::vector<sent_message> found;
    for (const auto& s : sent) {
      if (s.message.kind == kind) found.push_back(s);
    }
    return found;
  }
  std::vector<sent_message> sent;
};

// Peer liveness the test sets: every rank alive unless the test says otherwise.
class fake_liveness : public core::peer_liveness {
 public:
  core::peer_state state(core::rank_id peer) const override {
    const auto it = states.find(peer);
    return it == states.end() ? core::peer_state::alive : it->second;
  }
  std::map<core::rank_id, core::peer_state> states;
};

class fake_clock : public core::clock {
 public:
  std::uint64_t now_us() const override { return now; }
  std::uint64_t now = 0;
};

}  // namespace kvsim::testing
