#pragma once
// Where a rank's script steps come from and its answers go: one line per message, in the
// protocol of step_channel.h. Two ends carry it, and the rank that serves the steps runs the
// same code over either (rank_process.h):
//   step_channel       a socketpair from the kvsim parent that started the rank (--ranks 2)
//   control_step_link  step frames over the authenticated, sealed control plane, from rank 0
//                      to rank 1, when torchrun or srun started both (launched_run.h)
#include <chrono>
#include <optional>
#include <string>

namespace kvsim::real {

class step_link {
 public:
  virtual ~step_link() = default;
  // One line; false when the other end has gone. Thread-safe.
  virtual bool write_line(const std::string& line) = 0;
  // The next line; empty when none came within `timeout`; throws real_backend_error once the
  // other end has closed (or, on the control plane, was refused). One reader at a time.
  virtual std::optional<std::string> read_line(std::chrono::milliseconds timeout) = 0;
};

}  // namespace kvsim::real
