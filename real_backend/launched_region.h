#pragma once
// The host data plane's shared memory when torchrun or srun started the ranks (no kvsim
// parent to hand down a memfd): a named POSIX shared-memory object on the one machine both
// ranks run on, /dev/shm/kvsim-hp-<run tag>-<MASTER_PORT>. The run tag comes from the run's
// key (run_secret.h), so two runs never meet, and a run reusing a key on another port neither;
// the name tells nothing of the key. Rank 0 creates it exclusively, mode 600
// (shared_region::create_named), tells rank 1 it exists, and removes the name as soon as rank 1
// has mapped it, and on every error path before: both keep their mappings, and nothing is
// left in /dev/shm however the run ends afterwards (rank 1 killed, rank 0 failing).
#include <cstdint>
#include <string>

#include "real_backend/run_secret.h"

namespace kvsim::real {

std::string launched_region_name(const run_secret& secret, std::uint16_t master_port);

// Owns a name this process created: removes it at remove() or when destroyed.
class region_name_owner {
 public:
  explicit region_name_owner(std::string name) : name_(std::move(name)) {}
  ~region_name_owner() { remove(); }
  region_name_owner(const region_name_owner&) = delete;
  region_name_owner& operator=(const region_name_owner&) = delete;

  void remove() noexcept;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool removed_ = false;
};

}  // namespace kvsim::real
