#include "real_backend/host/host_transfer_engine.h"

#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {

host_transfer_engine::host_transfer_engine(host_page_pool& source,
                                           std::map<core::rank_id, host_page_pool*> destinations,
                                           std::uint32_t workers)
    : source_(source), destinations_(std::move(destinations)), lanes_(std::max<std::uint32_t>(workers, 1)) {
  for (std::size_t i = 0; i < lanes_.worker_lanes(); ++i) streams_.push_back(std::make_unique<host_stream>());
}

host_transfer_engine::~host_transfer_engine() {
  for (auto& s : streams_) s->wait_idle();
}

core::transfer_handle host_transfer_engine::submit(const core::transfer_request& request) {
  const auto destination_it = destinations_.find(request.destination_rank);
  if (destination_it == destinations_.end()) {
    throw real_backend_error("host data plane: no pages of rank " +
                             std::to_string(request.destination_rank) + " to copy into");
  }
  if (request.source_pages.size() != request.destination_pages.size()) {
    throw real_backend_error("host data plane: a transfer of " +
                             std::to_string(request.source_pages.size()) + " source pages into " +
                             std::to_string(request.destination_pages.size()) + " pages");
  }
  host_page_pool& destination = *destination_it->second;
  record r{request};
  // The same placement as the CUDA engine (copy_lanes.h): ungated work never queues behind a
  // gate, and a gate stands before the request's page `before_page` counted over all of its
  // transfers, as in the simulator.
  const lane_placement placement = lanes_.place(request);
  while (streams_.size() <= placement.lane) streams_.push_back(std::make_unique<host_stream>());
  r.stream = streams_[placement.lane].get();
  if (placement.gate != nullptr) {
    r.held_by = gates_.at(placement.gate);
    r.before_page = placement.gate_before_page;
  }
  for (std::size_t i = 0; i < request.source_pages.size(); ++i) {
    if (placement.queues_gate && i == placement.gate_before_page) {
      host_gate* gate = gates_.at(placement.gate);
      r.stream->enqueue([gate] { gate->arrive_and_wait(); });
    }
    const core::page_index from = request.source_pages[i];
    const core::page_index to = request.destination_pages[i];
    r.stream->enqueue([this, &destination, from, to] {
      host_page_pool::copy(source_, from, destination, to);
    });
  }
  r.ticket = r.stream->mark();
  const core::transfer_handle handle = next_handle_++;
  transfers_.emplace(handle, r);
  return handle;
}

core::transfer_poll host_transfer_engine::poll(core::transfer_handle handle) {
  record& r = transfers_.at(handle);
  if (r.state == core::transfer_poll::in_flight && r.stream->done(r.ticket)) {
    r.state = core::transfer_poll::succeeded;
    ended_.push_back({handle, r.request, r.state, r.held_by != nullptr ? r.before_page : 0});
  }
  return r.state;
}

bool host_transfer_engine::cancel(core::transfer_handle handle) {
  return poll(handle) != core::transfer_poll::in_flight;
}

void host_transfer_engine::hold(core::room_key owner, hold_gate& gate, std::uint32_t before_page) {
  auto* host = dynamic_cast<host_gate*>(&gate);
  if (host == nullptr) throw real_backend_error("host data plane: a gate of another data plane");
  lanes_.hold(owner, gate, before_page);
  gates_[&gate] = host;
}

std::vector<held_transfer> host_transfer_engine::held_at(const hold_gate& gate) const {
  std::vector<held_transfer> held;
  for (const auto& [handle, r] : transfers_) {
    if (r.held_by == &gate) held.push_back({handle, r.request, r.before_page});
  }
  return held;
}

std::vector<ended_transfer> host_transfer_engine::take_ended() {
  std::vector<ended_transfer> e;
  e.swap(ended_);
  return e;
}

}  // namespace kvsim::real
