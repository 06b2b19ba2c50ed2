#include "sim/sim_storage.h"

#include <algorithm>

#include "sim/sim_assert.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t storage_stall_us = 50;
constexpr std::uint64_t which_read_tag = 0x10ead;

}  // namespace

sim_storage::sim_storage(world& w, core::rank_id rank, kv_memory& host)
    : world_(w), rank_(rank), host_(host), progressed_(w, "storage read progress") {}

std::uint64_t sim_storage::object() const { return object_token(object_kind::storage, rank_); }

std::uint64_t sim_storage::read_object(core::storage_handle handle, read_part part) const {
  return object_token(object_kind::storage_read,
                      (((std::uint64_t{rank_} << 32) | handle) << 1) | static_cast<std::uint64_t>(part));
}

core::storage_handle sim_storage::read_pages(core::room_key owner,
                                             const std::vector<core::page_index>& host_pages) {
  world_.step();
  world_.touch(object(), access::write);
  const core::storage_handle handle = next_handle_++;
  world_.touch(read_object(handle, read_part::state), access::write);
  world_.touch(read_object(handle, read_part::progress), access::write);
  reads_[handle] = read_record{owner, host_pages};
  latest_[owner] = handle;
  world_.emit(storage_read_started{handle, rank_, owner, host_pages});
  in_flight_.push_back(handle);
  if (!serving_) {
    serving_ = true;
    // The I/O actor declares what it touches (the books, each read's progress and state), so
    // a poll of a read's state and a page written by the read are independent steps.
    world_.spawn(actor_name{rank_, "io", actors_spawned_++}, [this] { serve(); }, world::no_home);
  }
  return handle;
}

void sim_storage::serve() {
  world_.touch(object(), access::read);  // in_flight_
  while (!in_flight_.empty()) {
    world_.step();
    world_.touch(object(), access::read);  // in_flight_
    const std::size_t pick =
        in_flight_.size() == 1
            ? 0
            : world_.choose(which_read_tag, static_cast<std::uint32_t>(in_flight_.size()));
    const core::storage_handle handle = in_flight_[pick];
    read_record& r = reads_.at(handle);
    world_.touch(read_object(handle, read_part::progress), access::write);
    if (r.written == r.host_pages.size()) {
      end(handle, true);
      continue;
    }
    if (world_.fault(fault_kind::transfer_stall)) world_.wait_virtual(storage_stall_us);
    world_.touch(read_object(handle, read_part::progress), access::write);  // a new step after a wait
    if (world_.fault(fault_kind::transfer_fail)) {
      end(handle, false);
      continue;
    }
    read_record& now = reads_.at(handle);
    const std::uint32_t logical = now.written++;
    const core::page_index page = now.host_pages[logical];
    host_.fill_canary(page, now.owner, logical);
    world_.emit(storage_page_written{handle, rank_, now.owner, page, logical});
    progressed_.notify_all();
    world_.touch(object(), access::read);  // in_flight_, for the loop's test
  }
  world_.touch(object(), access::write);
  serving_ = false;
}

void sim_storage::end(core::storage_handle handle, bool completed) {
  world_.touch(object(), access::write);  // in_flight_
  world_.touch(read_object(handle, read_part::state), access::write);
  read_record& r = reads_.at(handle);
  r.state = completed ? core::storage_poll::completed : core::storage_poll::failed;
  std::erase(in_flight_, handle);
  world_.emit(storage_read_ended{handle, rank_, r.owner, completed, r.written});
  progressed_.notify_all();
}

core::storage_poll sim_storage::poll(core::storage_handle handle) {
  world_.step();
  world_.touch(read_object(handle, read_part::state), access::read);
  const auto it = reads_.find(handle);
  KVSIM_SIM_ASSERT(it != reads_.end(), "poll of a storage read never started");
  // A poll that finds the read still running costs a little virtual time (the poller's
  // interval), so a poller spinning on a stalled read lets the clock reach the read's end.
  if (it->second.state == core::storage_poll::in_flight) world_.wait_virtual(1);
  world_.touch(read_object(handle, read_part::state), access::read);
  return reads_.at(handle).state;
}

core::storage_poll sim_storage::wait(core::storage_handle handle) {
  world_.touch(read_object(handle, read_part::state), access::read);
  while (reads_.at(handle).state == core::storage_poll::in_flight) {
    progressed_.wait();
    world_.touch(read_object(handle, read_part::state), access::read);
  }
  return reads_.at(handle).state;
}

void sim_storage::wait_progress(core::room_key owner, std::uint32_t pages) {
  world_.touch(object(), access::read);
  const auto latest = latest_.find(owner);
  if (latest == latest_.end()) return;
  const core::storage_handle handle = latest->second;
  const auto look = [&] {
    world_.touch(read_object(handle, read_part::state), access::read);
    world_.touch(read_object(handle, read_part::progress), access::read);
  };
  look();
  while (reads_.at(handle).state == core::storage_poll::in_flight &&
         reads_.at(handle).written < pages) {
    progressed_.wait();
    look();
  }
}

}  // namespace kvsim::sim

namespace kvsim::sim {

std::optional<core::storage_poll> sim_storage::state_of(core::room_key owner) const {
  world_.touch(object(), access::read);
  const auto latest = latest_.find(owner);
  if (latest == latest_.end()) return std::nullopt;
  world_.touch(read_object(latest->second, read_part::state), access::read);
  return reads_.at(latest->second).state;
}

}  // namespace kvsim::sim
