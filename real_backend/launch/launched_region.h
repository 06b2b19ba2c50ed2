#pragma once
// The host data plane's shared memory when torchrun or srun started the ranks (no kvsim
// parent to hand down a memfd): a named POSIX shared-memory object on the one machine both
// ranks run on, /dev/shm/kvsim-hp-<run tag>-<MASTER_PORT>. The run tag comes from the run's
// key (run_secret.h), so two runs never meet, and a run reusing a key on another port neither;
// the name tells nothing of the key. Rank 0 creates it exclusively, mode 600
// (shared_region::create_named), tells rank 1 it exists, and removes the name as soon as rank 1
// has mapped it, and on every error path before: both keep their mappings, and nothing is
// left in /dev/shm however the run ends afterwards (rank 1 killed, rank 0 failing).
#include <signal.h>

#include <cstdint>
#include <string>

#include "real_backend/wire/run_secret.h"

namespace kvsim::real {

std::string launched_region_name(const run_secret& secret, std::uint16_t master_port);

// Owns a name this process created: removes it at remove() or when destroyed, and, until
// then, when the process is told to stop: SIGTERM (how torchrun and srun stop a job), SIGINT
// (Ctrl-C) and SIGHUP remove every name an owner holds, from a handler that touches nothing
// but /dev/shm paths written down beforehand (unlink, async-signal-safe), and then end the
// process as the signal's earlier action would (by default: killed by the signal, exit status
// 128 + N). A signal this process ignored when the first owner came (nohup's SIGHUP, bash's
// SIGINT for a background job) stays ignored. SIGKILL cannot be caught: it leaves the name.
class region_name_owner {
 public:
  explicit region_name_owner(std::string name);
  ~region_name_owner() { remove(); }
  region_name_owner(const region_name_owner&) = delete;
  region_name_owner& operator=(const region_name_owner&) = delete;

  void remove() noexcept;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int slot_ = -1;  // where the signal handler finds the name; -1: not there
  bool removed_ = false;
};

// SIGTERM, SIGINT and SIGHUP held back from this thread while it lives (pthread_sigmask), so
// that a signal between creating a name and its owner taking it waits for the owner, which
// then removes it. For a thread that is the process's only one (rank 0 before its messenger):
// a signal sent to the process may reach any thread that does not hold it back.
class termination_signals_held {
 public:
  termination_signals_held();
  ~termination_signals_held() { release(); }
  termination_signals_held(const termination_signals_held&) = delete;
  termination_signals_held& operator=(const termination_signals_held&) = delete;

  void release() noexcept;  // a signal that came meanwhile is delivered now

 private:
  bool held_ = false;
  sigset_t previous_{};  // the thread's mask before
};

}  // namespace kvsim::real
