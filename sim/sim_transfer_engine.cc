#include "sim/sim_transfer_engine.h"

#include "sim/sim_assert.h"
#include "sim/transfer_id.h"

namespace kvsim::sim {
namespace {

constexpr std::uint64_t transfer_stall_us = 50;
// Tag of the data choice "a dead rank's NIC still writes this page (1) or has stopped (0)".
constexpr std::uint64_t dead_nic_writes_tag = 0xdead1c;

transfer_id global_id(core::rank_id rank, core::transfer_handle handle) {
  return make_transfer_id(rank, handle);
}

}  // namespace

// Shared objects (sim/step_log.h): the engine's own state (holds, stopped); each transfer's
// state (in flight or how it ended, and a cancel request), which polls read; its progress
// (started, pages copied: the executor lives in it), which only a cancel reads, so a poll
// and a page copy are independent; and a held request's page count at a destination.
std::uint64_t sim_transfer_engine::engine_object() const {
  return object_token(object_kind::engine, rank_);
}
std::uint64_t sim_transfer_engine::transfer_object(core::transfer_handle handle, transfer_part part) const {
  return object_token(object_kind::transfer,
                      (((std::uint64_t{rank_} << 32) | handle) << 1) | static_cast<std::uint64_t>(part));
}

sim_transfer_engine::sim_transfer_engine(world& w, core::rank_id rank,
                                         std::map<core::rank_id, kv_memory*> memories)
    : world_(w), rank_(rank), ended_(w, "transfer end") {
  set_memories(memories);
}

void sim_transfer_engine::set_memories(const std::map<core::rank_id, kv_memory*>& memories) {
  memories_.clear();
  for (const auto& [rank, memory] : memories) {
    if (rank >= memories_.size()) memories_.resize(static_cast<std::size_t>(rank) + 1, nullptr);
    memories_[rank] = memory;
  }
}

sim_transfer_engine::transfer_record& sim_transfer_engine::record(core::transfer_handle handle) {
  KVSIM_SIM_ASSERT(handle >= 1 && handle <= transfers_.size(),
                   "a transfer this engine never started");
  return transfers_[handle - 1];
}

const sim_transfer_engine::transfer_record& sim_transfer_engine::record(
    core::transfer_handle handle) const {
  KVSIM_SIM_ASSERT(handle >= 1 && handle <= transfers_.size(),
                   "a transfer this engine never started");
  return transfers_[handle - 1];
}

kv_memory& sim_transfer_engine::memory(core::rank_id rank) const {
  KVSIM_SIM_ASSERT(rank < memories_.size() && memories_[rank] != nullptr,
                   "transfer between ranks without simulated memory");
  return *memories_[rank];
}

core::transfer_handle sim_transfer_engine::submit(const core::transfer_request& request) {
  KVSIM_SIM_ASSERT(request.source_pages.size() == request.destination_pages.size(),
                   "a transfer copies page for page");
  (void)memory(rank_);  // asserts: both ranks have a simulated pool
  (void)memory(request.destination_rank);
  world_.touch(engine_object(), access::read);  // stopped_; handles are fresh names
  const core::transfer_handle handle = next_handle_++;
  world_.touch(transfer_object(handle, transfer_part::state), access::write);
  world_.touch(transfer_object(handle, transfer_part::progress), access::write);
  KVSIM_SIM_ASSERT(handle == transfers_.size() + 1, "handles count up from 1");
  transfers_.push_back(transfer_record{request});
  world_.emit(transfer_submitted{global_id(rank_, handle), request.owner, rank_,
                                 request.destination_rank, request.source_pages,
                                 request.destination_pages});
  if (stopped_) {  // a dead rank posts nothing new
    end(handle, core::transfer_poll::failed);
    return handle;
  }
  world_.spawn(actor_name{rank_, "transfer", static_cast<std::uint32_t>(handle)},
               [this, handle] { execute(handle); }, transfer_object(handle, transfer_part::progress));
  return handle;
}

void sim_transfer_engine::execute(core::transfer_handle handle) {
  for (;;) {
    world_.step();
    world_.touch(engine_object(), access::read);  // stopped_, holds_
    world_.touch(transfer_object(handle, transfer_part::state), access::read);  // cancelled
    transfer_record& t = record(handle);
    if (t.cancelled) return end(handle, core::transfer_poll::failed);
    if (stopped_ && world_.choose(dead_nic_writes_tag, 2) == 0) {
      return end(handle, core::transfer_poll::failed);
    }
    t.started = true;
    if (t.pages_copied == t.request.source_pages.size()) {
      return end(handle, core::transfer_poll::succeeded);
    }
    // Only held requests count their pages (a std::map node: the count stays put while the
    // gate makes this actor wait).
    const auto hold = holds_.find(t.request.owner);
    std::uint32_t* request_copied =
        hold == holds_.end() ? nullptr
                             : &request_pages_copied_[{t.request.owner, t.request.destination_rank}];
    // Named only for a held request, the only kind that counts: naming it hashes the
    // request's text, which every page copy of every transfer used to pay.
    const std::uint64_t progress =
        request_copied == nullptr
            ? 0
            : object_token(object_kind::request_progress,
                           name_token(core::to_string(t.request.owner)) ^ t.request.destination_rank);
    if (request_copied != nullptr) world_.touch(progress, access::read);
    if (request_copied != nullptr && hold->second.before_page == *request_copied) {
      hold->second.at->pass();
    }
    if (world_.fault(fault_kind::transfer_stall)) world_.wait_virtual(transfer_stall_us);
    // A new step after a wait: the state may have changed meanwhile (a cancel does not stop
    // a copy once started, but the read is what the step does).
    world_.touch(transfer_object(handle, transfer_part::state), access::read);
    world_.touch(transfer_object(handle, transfer_part::progress), access::write);
    if (world_.fault(fault_kind::transfer_fail)) return end(handle, core::transfer_poll::failed);
    transfer_record& now = record(handle);
    const std::uint32_t i = now.pages_copied++;
    if (request_copied != nullptr) {
      world_.touch(progress, access::write);
      ++*request_copied;
    }
    const core::page_index source_page = now.request.source_pages[i];
    const core::page_index destination_page = now.request.destination_pages[i];
    memory(now.request.destination_rank).copy_from(memory(rank_), source_page, destination_page);
    world_.emit(transfer_page_copied{global_id(rank_, handle), now.request.owner, rank_,
                                     source_page, now.request.destination_rank,
                                     destination_page});
  }
}

void sim_transfer_engine::end(core::transfer_handle handle, core::transfer_poll outcome) {
  world_.touch(transfer_object(handle, transfer_part::state), access::write);
  transfer_record& t = record(handle);
  t.state = outcome;
  world_.emit(transfer_ended{global_id(rank_, handle), t.request.owner, outcome});
  ended_.notify_all();
}

core::transfer_poll sim_transfer_engine::poll(core::transfer_handle handle) {
  world_.step();
  world_.touch(transfer_object(handle, transfer_part::state), access::read);
  const transfer_record& t = record(handle);
  if (t.state == core::transfer_poll::in_flight &&
      world_.fault(fault_kind::transfer_timeout_unconfirmed)) {
    world_.emit(transfer_timed_out{global_id(rank_, handle), t.request.owner, true});
    return core::transfer_poll::timed_out_unconfirmed;
  }
  return t.state;
}

bool sim_transfer_engine::cancel(core::transfer_handle handle) {
  world_.step();
  world_.touch(transfer_object(handle, transfer_part::state), access::write);
  world_.touch(transfer_object(handle, transfer_part::progress), access::read);  // started
  transfer_record& t = record(handle);
  if (t.state != core::transfer_poll::in_flight) return true;
  if (t.started) return false;  // no cancel once bytes may move (Mooncake)
  t.cancelled = true;
  return false;  // not confirmed until the executor has seen it; poll or wait to learn
}

core::transfer_poll sim_transfer_engine::wait(core::transfer_handle handle) {
  const wait_reason reason{wait_kind::transfer_end, "", handle, rank_, 0};
  world_.touch(transfer_object(handle, transfer_part::state), access::read);
  while (record(handle).state == core::transfer_poll::in_flight) {
    ended_.wait(reason);
    world_.touch(transfer_object(handle, transfer_part::state), access::read);
  }
  return record(handle).state;
}

bool sim_transfer_engine::quiet() const {
  for (core::transfer_handle handle = 1; handle <= transfers_.size(); ++handle) {
    world_.touch(transfer_object(handle, transfer_part::state), access::read);
    if (record(handle).state == core::transfer_poll::in_flight) return false;
  }
  return true;
}

void sim_transfer_engine::stop() {
  world_.touch(engine_object(), access::write);
  stopped_ = true;
}

void sim_transfer_engine::hold(core::room_key owner, gate& g, std::uint32_t before_page) {
  world_.touch(engine_object(), access::write);
  holds_[owner] = hold_rule{&g, before_page};
}

}  // namespace kvsim::sim
