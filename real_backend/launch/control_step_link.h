#pragma once
// The step protocol (step_channel.h) over the control plane: each line one sealed step frame
// (control_frame.h) on the authenticated link between this rank and `peer`. Rank 0 of a run
// that torchrun or srun started drives the script with it; rank 1 serves its steps from it
// (launched_run.h). Only the authenticated `peer` can put a line in: the messenger refuses
// step frames from any other rank (tcp_messenger.h), and this reads the peer's only.
#include "core/ids.h"
#include "real_backend/launch/step_link.h"
#include "real_backend/wire/tcp_messenger.h"

namespace kvsim::real {

class control_step_link final : public step_link {
 public:
  // `wire` took accept_steps_from(peer) before it linked, and outlives this.
  control_step_link(tcp_messenger& wire, core::rank_id peer) : wire_(wire), peer_(peer) {}

  // A control character in `line` becomes a space (a frame with one would be refused); a line
  // over step_line_max is a real_backend_error.
  bool write_line(const std::string& line) override;
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) override;

 private:
  tcp_messenger& wire_;
  core::rank_id peer_;
};

}  // namespace kvsim::real
