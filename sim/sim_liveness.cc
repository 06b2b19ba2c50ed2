#include "sim/sim_liveness.h"

#include "sim/sim_assert.h"

namespace kvsim::sim {

core::peer_state sim_liveness::state(core::rank_id peer) const {
  world_.touch(object_token(object_kind::liveness, peer), access::read);
  const auto it = states_.find(peer);
  return it == states_.end() ? core::peer_state::alive : it->second;
}

void sim_liveness::stop(core::rank_id rank) {
  KVSIM_SIM_ASSERT(alive(rank), "a rank dies once");
  world_.touch(object_token(object_kind::liveness, rank), access::write);
  states_[rank] = core::peer_state::lost;
  world_.emit(rank_stopped{rank});
}

void sim_liveness::confirm_torn_down(core::rank_id rank) {
  KVSIM_SIM_ASSERT(state(rank) == core::peer_state::lost, "only a dead rank is torn down, once");
  world_.touch(object_token(object_kind::liveness, rank), access::write);
  states_[rank] = core::peer_state::torn_down;
  world_.emit(transport_torn_down{rank});
}

}  // namespace kvsim::sim
