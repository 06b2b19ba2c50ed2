#pragma once
// What goes wrong in the real backend, as exceptions with one readable line each. The core
// never sees them: they end a real run (a CUDA fault, a broken control connection, a bad
// launch environment), and the command prints the line and exits.
#include <stdexcept>
#include <string>

namespace kvsim::real {

// Any failure of the real backend: a CUDA or NCCL call, a device that cannot do what a
// scenario needs, a script that waited past its deadline.
class real_backend_error : public std::runtime_error {
 public:
  explicit real_backend_error(const std::string& line) : std::runtime_error(line) {}
};

// The TCP control plane: a connection that failed or closed, a malformed or truncated frame.
class control_plane_error : public real_backend_error {
 public:
  explicit control_plane_error(const std::string& line) : real_backend_error(line) {}
};

// A link whose handshake failed (link_auth.h): the peer did not prove the run's key, or it is
// not the rank it had to be. A refusal of the launch, not a failure of the run: `kvsim real
// --launched` exits 2 on it.
class link_refused : public control_plane_error {
 public:
  explicit link_refused(const std::string& line) : control_plane_error(line) {}
};

// A peer that was there and is gone: its link closed or was reset between frames after it
// had authenticated, or its process ended. Nothing it sent was wrong (not a refusal): it
// stopped, most likely because it died.
class peer_gone : public control_plane_error {
 public:
  explicit peer_gone(const std::string& line) : control_plane_error(line) {}
};

// The launcher's environment (RANK, WORLD_SIZE, SLURM_PROCID, ...) is malformed.
class launch_error : public real_backend_error {
 public:
  explicit launch_error(const std::string& line) : real_backend_error(line) {}
};

// A rank group's collectives diverged (DOMAIN.md I5): one rank waits in a collective that a
// peer entered differently or never will. `what()` is the finding's one line ("I5: ...").
// Thrown out of the core's collective call so that the rank's thread stops where it waits.
class collective_divergence : public real_backend_error {
 public:
  explicit collective_divergence(const std::string& finding_line)
      : real_backend_error(finding_line) {}
};

}  // namespace kvsim::real
