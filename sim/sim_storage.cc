#include "sim/sim_storage.h"

#include "sim/sim_assert.h"

namespace kvsim::sim {

core::storage_handle sim_storage::read_pages(core::room_key /*owner*/,
                                             const std::vector<core::page_index>& /*host_pages*/) {
  world_.step();
  const core::storage_handle handle = next_handle_++;
  reads_[handle] = core::storage_poll::in_flight;
  world_.spawn(actor_name{rank_, "storage", static_cast<std::uint32_t>(handle)},
               [this, handle] {
                 core::storage_poll outcome = core::storage_poll::completed;
                 for (std::uint32_t i = 0; i < read_steps_; ++i) {
                   world_.step();
                   if (world_.fault(fault_kind::transfer_stall)) world_.wait_virtual(50);
                   if (world_.fault(fault_kind::transfer_fail)) {
                     outcome = core::storage_poll::failed;
                     break;
                   }
                 }
                 reads_[handle] = outcome;
                 ended_.notify_all();
               });
  return handle;
}

core::storage_poll sim_storage::poll(core::storage_handle handle) {
  world_.step();
  const auto it = reads_.find(handle);
  KVSIM_SIM_ASSERT(it != reads_.end(), "poll of a storage read never started");
  // A poll that finds the read still running costs a little virtual time (the poller's
  // interval), so a poller spinning on a stalled read lets the clock reach the read's end.
  if (it->second == core::storage_poll::in_flight) world_.wait_virtual(1);
  return reads_.at(handle);
}

core::storage_poll sim_storage::wait(core::storage_handle handle) {
  while (reads_.at(handle) == core::storage_poll::in_flight) ended_.wait();
  return reads_.at(handle);
}

}  // namespace kvsim::sim
