#include "real_backend/host/host_storage.h"

#include "real_backend/errors.h"

namespace kvsim::real {

core::storage_handle host_storage::read_pages(core::room_key owner,
                                              const std::vector<core::page_index>& pages) {
  if (const auto hold = holds_.find(owner); hold != holds_.end()) {
    host_gate* gate = hold->second;
    stream_.enqueue([gate] { gate->arrive_and_wait(); });
  }
  for (std::uint32_t j = 0; j < pages.size(); ++j) {
    const core::page_index page = pages[j];
    stream_.enqueue([this, owner, page, j] { host_.fill(page, {owner.room, owner.generation, j}); });
  }
  reads_[next_handle_] = stream_.mark();
  return next_handle_++;
}

core::storage_poll host_storage::poll(core::storage_handle handle) {
  return stream_.done(reads_.at(handle)) ? core::storage_poll::completed
                                         : core::storage_poll::in_flight;
}

core::storage_poll host_storage::wait(core::storage_handle handle) {
  stream_.wait_for(reads_.at(handle));
  return core::storage_poll::completed;
}

void host_storage::hold(core::room_key owner, hold_gate& gate) {
  auto* host = dynamic_cast<host_gate*>(&gate);
  if (host == nullptr) throw real_backend_error("host data plane: a gate of another data plane");
  holds_[owner] = host;
}

}  // namespace kvsim::real
