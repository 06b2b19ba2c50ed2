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
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "real_backend/launch/remote_rank.h"
#include "real_backend/wire/run_secret.h"

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
  std::string name;                   // "the decode rank's process", as errors name it
  std::unique_ptr<remote_rank> rank;  // null until started
};

// Starts one rank process; `name` ("the decode rank's process") is how errors name it. The
// child is killed when the thread that started it ends (PR_SET_PDEATHSIG with SIGKILL, checked
// against the parent having died before it was set), so a parent killed outright leaves no
// rank behind: start ranks from a thread that outlives them. Its key goes in KVSIM_RUN_KEY,
// which the child takes out of its environment as it starts (run_secret.h); the parent wipes
// its own copies once the child is forked.
spawned_rank spawn_rank_process(const std::string& name, const rank_process_launch& launch,
                                const run_secret& secret);

// How the process ended, once it has, without reaping it (waitid WNOWAIT): "exited with
// status 3", "was killed by signal 9 (Killed)"; empty while it runs.
std::optional<std::string> process_end(pid_t pid);

// Throws peer_gone naming the first process of `run` that has ended, and how.
void throw_if_any_ended(const std::vector<spawned_rank*>& run);

// Waits up to `patience` for `rank` to say `word` ("listening", "ready"), looking at every
// process of `run` every 50 ms meanwhile: a rank that dies, this one or another, is named
// with how it ended (peer_gone) within a fraction of a second, instead of the wait running
// out its patience (then: "timed out: waited 20 s for ... to say 'ready'").
void await_word(const std::vector<spawned_rank*>& run, spawned_rank& rank, const std::string& word,
                std::chrono::milliseconds patience);

// Ends the started ones among `ranks`, in two phases: every one stopped (its threads read the
// control plane no more), then every one released (it exits and closes its links), so that no
// rank sees a peer's links close while it still runs; then each is waited for, and killed (it
// alone, by its pid) if it has not exited in time (10 s; 1 s once the run has failed, when a
// rank may be caught waiting for a peer that died). The first failure is kept in `failure`,
// and then a process that did not exit 0: "a rank process failed (rank 0 exit 0, rank 1 exit
// 3)".
void end_rank_processes(const std::vector<spawned_rank*>& ranks, std::string& failure);

}  // namespace kvsim::real
