#include "real_backend/host_transfer_engine.h"

#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {

host_transfer_engine::host_transfer_engine(host_page_pool& source,
                                           std::map<core::rank_id, host_page_pool*> destinations,
                                           std::uint32_t workers)
    : source_(source), destinations_(std::move(destinations)) {
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(workers, 1); ++i)
    shared_.push_back(std::make_unique<host_stream>());
}

host_transfer_engine::~host_transfer_engine() {
  for (auto& s : held_) s->wait_idle();
  for (auto& s : shared_) s->wait_idle();
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
  const auto hold = holds_.find(request.owner);
  const bool gated = hold != holds_.end() && hold->second.before_page < request.source_pages.size();
  if (gated) {
    held_.push_back(std::make_unique<host_stream>());
    r.stream = held_.back().get();
    r.held_by = hold->second.gate;
    r.before_page = hold->second.before_page;
  } else {
    r.stream = shared_[next_shared_++ % shared_.size()].get();
  }
  for (std::size_t i = 0; i < request.source_pages.size(); ++i) {
    if (gated && i == r.before_page) {
      host_gate* gate = hold->second.gate;
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
  holds_[owner] = {host, before_page};
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
