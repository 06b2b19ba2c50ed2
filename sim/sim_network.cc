#include "sim/sim_network.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t delay_tag = 0xde1a;
constexpr std::uint64_t delay_step_us = 10;
constexpr std::uint32_t delay_choices = 4;  // 10, 20, 30 or 40 us
constexpr std::uint64_t retransmit_us = 100;  // a dropped message arrives again this much later

}  // namespace

class sim_network::endpoint_port final : public core::messenger {
 public:
  endpoint_port(sim_network& network, core::rank_id rank) : network_(network), rank_(rank) {}
  void send(core::rank_id to, const core::control_message& message) override {
    network_.send(rank_, to, message);
  }
  core::control_message receive() override { return network_.receive(rank_); }

 private:
  sim_network& network_;
  core::rank_id rank_;
};

sim_network::sim_network(world& w) : world_(w) {}
sim_network::~sim_network() = default;

sim_network::mailbox& sim_network::box(core::rank_id rank) {
  mailbox& m = mailboxes_[rank];
  if (!m.waiters) m.waiters = std::make_unique<wait_queue>(world_, "mailbox of rank " + std::to_string(rank));
  return m;
}

core::messenger& sim_network::endpoint(core::rank_id rank) {
  auto& port = ports_[rank];
  if (!port) port = std::make_unique<endpoint_port>(*this, rank);
  box(rank);
  return *port;
}

void sim_network::send(core::rank_id from, core::rank_id to, core::control_message message) {
  world_.step();
  message.from = from;
  const message_id id = next_message_++;
  world_.emit(message_sent{id, from, to, message.kind, message.key});
  // The control plane runs over TCP (ZMQ in SGLang, Mooncake's RPC): a message is not lost
  // for good, but a dropped connection loses what was in flight and the sender resends it
  // after reconnecting, late and out of order with everything sent meanwhile.
  const std::uint64_t lost_us = world_.fault(fault_kind::message_drop) ? retransmit_us : 0;
  if (lost_us != 0) world_.emit(message_dropped{id});
  const int copies = world_.fault(fault_kind::message_duplicate) ? 2 : 1;
  for (int copy = 0; copy < copies; ++copy) {
    const std::uint64_t delay_us =
        lost_us + (world_.fault(fault_kind::message_delay)
                       ? delay_step_us * (1 + world_.choose(delay_tag, delay_choices))
                       : 0);
    world_.post(delay_us, [this, id, to, message] {
      box(to).messages.push_back(message);
      world_.emit(message_delivered{id, to});
      box(to).waiters->notify_all();
    });
  }
}

core::control_message sim_network::receive(core::rank_id rank) {
  world_.step();
  mailbox& m = box(rank);
  while (m.messages.empty()) m.waiters->wait();
  core::control_message message = std::move(m.messages.front());
  m.messages.pop_front();
  return message;
}

std::optional<core::control_message> sim_network::try_receive(core::rank_id rank) {
  mailbox& m = box(rank);
  if (m.messages.empty()) return std::nullopt;
  core::control_message message = std::move(m.messages.front());
  m.messages.pop_front();
  return message;
}

}  // namespace kvsim::sim
