#include "real_backend/launched_region.h"

#include <sys/mman.h>

namespace kvsim::real {

std::string launched_region_name(const run_secret& secret, std::uint16_t master_port) {
  return "/kvsim-hp-" + derive_run_tag(secret) + "-" + std::to_string(master_port);
}

void region_name_owner::remove() noexcept {
  if (removed_) return;
  removed_ = true;
  shm_unlink(name_.c_str());
}

}  // namespace kvsim::real
