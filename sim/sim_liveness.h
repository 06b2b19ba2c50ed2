#pragma once
// Peer liveness, simulated: which ranks are alive, which died (peer death, a fault of the
// run's profile), and for which of the dead the transport has confirmed its connections torn
// down. The core reads it through core::peer_liveness, as a real engine reads a heartbeat
// and its transport's connection state; the world decides the death (stop) and the
// confirmation (confirm_torn_down, once the dead rank's posted transfers have stopped).
#include <map>

#include "core/ports.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_liveness final : public core::peer_liveness {
 public:
  explicit sim_liveness(world& w) : world_(w) {}

  core::peer_state state(core::rank_id peer) const override;
  bool alive(core::rank_id rank) const { return state(rank) == core::peer_state::alive; }

  // `rank` stops for good (emits rank_stopped). A rank dies once.
  void stop(core::rank_id rank);
  // The transport confirms that nothing of dead `rank` lands any more (emits
  // transport_torn_down). Only after stop.
  void confirm_torn_down(core::rank_id rank);

 private:
  world& world_;
  std::map<core::rank_id, core::peer_state> states_;  // absent: alive
};

}  // namespace kvsim::sim
