#pragma once
// HiCache L3 storage reads for prefetch: each read runs as its own actor (rank, "storage",
// id) that takes `read_steps` scheduled steps, may stall or fail by the fault profile, and
// then completes.
#include <cstdint>
#include <map>

#include "core/ports.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_storage final : public core::storage_io {
 public:
  sim_storage(world& w, core::rank_id rank, std::uint32_t read_steps = 2)
      : world_(w), rank_(rank), read_steps_(read_steps), ended_(w, "storage read end") {}

  core::storage_handle read_pages(core::room_key owner,
                                  const std::vector<core::page_index>& host_pages) override;
  core::storage_poll poll(core::storage_handle handle) override;
  // Blocks until the read is no longer in flight (scenarios; the core polls).
  core::storage_poll wait(core::storage_handle handle);

 private:
  world& world_;
  core::rank_id rank_;
  std::uint32_t read_steps_;
  std::map<core::storage_handle, core::storage_poll> reads_;
  wait_queue ended_;
  core::storage_handle next_handle_ = 1;
};

}  // namespace kvsim::sim
