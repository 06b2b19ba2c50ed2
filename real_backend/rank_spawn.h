#pragma once
// How a `kvsim real --ranks N` parent starts its rank processes and ends them: each is this
// program again (fork + exec of /proc/self/exe with this process's own arguments) with RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT, a fresh KVSIM_RUN_KEY for the run and two inherited
// fds (the shared memory's, KVSIM_HOST_PLANE_FD, and its end of a socketpair, KVSIM_SCRIPT_FD,
// which the parent drives as a remote_rank). Used by the transfer scripts' processes
// (process_launch.h) and the HiCache scripts' (prefetch_processes.h).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ids.h"
#include "real_backend/remote_rank.h"
#include "real_backend/run_secret.h"

namespace kvsim::real {

// How long a rank's start may take (a fresh process connecting and saying it is ready) before
// the run gives it up: generous, since a loaded CI machine starts processes slowly.
inline constexpr std::chrono::milliseconds rank_start_patience{20'000};

// A loopback port held (bound, not listening, SO_REUSEADDR) for the run: the kernel hands it
// to no one else, and a rank's listener, also SO_REUSEADDR, may still bind it (Linux).
class reserved_port {
 public:
  reserved_port();
  ~reserved_port();
  reserved_port(const reserved_port&) = delete;
  reserved_port& operator=(const reserved_port&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

struct rank_process_launch {
  core::rank_id rank = 0;
  std::uint32_t world_size = 2;
  std::uint16_t master_port = 0;  // 0: none (the ranks find each other otherwise)
  int plane_fd = -1;
};

struct spawned_rank {
  pid_t pid = -1;
  std::unique_ptr<remote_rank> rank;  // null until started
};

// Starts one rank process; `name` ("the decode rank's process") is how errors name it.
spawned_rank spawn_rank_process(const std::string& name, const rank_process_launch& launch,
                                const run_secret& secret);

// Ends the started ones among `ranks`, in two phases: every one stopped (its threads read the
// control plane no more), then every one released (it exits and closes its links), so that no
// rank sees a peer's links close while it still runs; then each is waited for, and killed (it
// alone, by its pid) if it has not exited in time. The first failure is kept in `failure`,
// and then a process that did not exit 0: "a rank process failed (rank 0 exit 0, rank 1 exit
// 3)".
void end_rank_processes(const std::vector<spawned_rank*>& ranks, std::string& failure);

}  // namespace kvsim::real
