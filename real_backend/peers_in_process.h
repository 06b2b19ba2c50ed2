#pragma once
// Peer liveness on the real backend's script runs and bench: both ranks live in this process
// and die with it, so a peer is never lost while a run lasts (peer death, and the quarantine
// it needs until the transport confirms the teardown, is searched in the simulator).
#include "core/ports.h"

namespace kvsim::real {

class peers_in_process final : public core::peer_liveness {
 public:
  core::peer_state state(core::rank_id) const override { return core::peer_state::alive; }
};

}  // namespace kvsim::real
