#include "real_backend/cuda/cuda_transfer_engine.h"

#include <string>

#include "real_backend/cuda/cuda_check.h"
#include "real_backend/cuda/devices.h"
#include "real_backend/plane_piece.h"

namespace kvsim::real {

cuda_transfer_engine::cuda_transfer_engine(core::rank_id rank, cuda_page_pool& source,
                                           std::map<core::rank_id, cuda_page_pool*> destinations,
                                           std::uint32_t worker_streams)
    : rank_(rank),
      source_(source),
      destinations_(std::move(destinations)),
      lanes_(worker_streams == 0 ? 1 : worker_streams) {
  for (const auto& [destination_rank, pool] : destinations_) {
    if (pool->page_bytes() != source_.page_bytes()) {
      throw real_backend_error("rank " + std::to_string(rank_) + " copies " +
                               std::to_string(source_.page_bytes()) + "-byte pages, rank " +
                               std::to_string(destination_rank) + " has " +
                               std::to_string(pool->page_bytes()) + "-byte pages");
    }
    (void)enable_peer_access(source_.device(), pool->device());
  }
  KVSIM_CUDA_CHECK(cudaSetDevice(source_.device()));
  for (std::size_t i = 0; i < lanes_.worker_lanes(); ++i) {
    cudaStream_t stream = nullptr;
    // Non-blocking: never ordered behind the legacy default stream (or it behind a gate).
    KVSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    worker_streams_.push_back(stream);
  }
}

std::unique_ptr<cuda_transfer_engine> cuda_transfer_engine::over(
    core::rank_id rank, page_memory& source,
    const std::map<core::rank_id, page_memory*>& destinations, const char* plane) {
  std::map<core::rank_id, cuda_page_pool*> pools;
  for (const auto& [r, memory] : destinations)
    pools[r] = &piece_made_by<cuda_page_pool>(*memory, plane, "pages");
  return std::make_unique<cuda_transfer_engine>(
      rank, piece_made_by<cuda_page_pool>(source, plane, "pages"), std::move(pools));
}

cuda_transfer_engine::~cuda_transfer_engine() {
  KVSIM_CUDA_WARN(cudaSetDevice(source_.device()));
  // Neither call waits for the device: work still queued completes, then its resources go.
  for (auto& [handle, t] : transfers_) {
    if (t.done != nullptr) KVSIM_CUDA_WARN(cudaEventDestroy(t.done));
  }
  for (cudaEvent_t e : spare_events_) KVSIM_CUDA_WARN(cudaEventDestroy(e));
  for (cudaStream_t s : worker_streams_) KVSIM_CUDA_WARN(cudaStreamDestroy(s));
  for (cudaStream_t s : held_streams_) KVSIM_CUDA_WARN(cudaStreamDestroy(s));
}

cudaStream_t cuda_transfer_engine::stream_of(std::size_t lane) {
  if (lane < worker_streams_.size()) return worker_streams_[lane];
  // A held request's own stream: lanes are numbered in the order copy_lanes opened them.
  while (worker_streams_.size() + held_streams_.size() <= lane) {
    cudaStream_t stream = nullptr;
    KVSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    held_streams_.push_back(stream);
  }
  return held_streams_[lane - worker_streams_.size()];
}

cuda_page_pool& cuda_transfer_engine::destination_of(core::rank_id rank) const {
  const auto it = destinations_.find(rank);
  if (it == destinations_.end()) {
    throw real_backend_error("rank " + std::to_string(rank_) + " has no route to rank " +
                             std::to_string(rank) + "'s pages");
  }
  return *it->second;
}

cudaEvent_t cuda_transfer_engine::take_event() {
  if (!spare_events_.empty()) {
    cudaEvent_t e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  KVSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

core::transfer_handle cuda_transfer_engine::submit(const core::transfer_request& request) {
  if (request.source_pages.size() != request.destination_pages.size()) {
    throw real_backend_error(
        "a transfer copies page for page (got " + std::to_string(request.source_pages.size()) +
        " source and " + std::to_string(request.destination_pages.size()) + " destination pages)");
  }
  cuda_page_pool& destination = destination_of(request.destination_rank);
  KVSIM_CUDA_CHECK(cudaSetDevice(source_.device()));
  const lane_placement placement = lanes_.place(request);
  cudaStream_t stream = stream_of(placement.lane);

  transfer_record record{request};
  if (placement.gate != nullptr) {
    record.held_by = gates_.at(placement.gate);
    record.before_page = placement.gate_before_page;
  }
  const std::size_t bytes = source_.page_bytes();
  const bool same_device = destination.device() == source_.device();
  for (std::size_t i = 0; i < request.source_pages.size(); ++i) {
    if (placement.queues_gate && placement.gate_before_page == i) {
      gates_.at(placement.gate)->hold(stream);
    }
    const std::uint8_t* from = source_.page_pointer(request.source_pages[i]);
    std::uint8_t* to = destination.page_pointer(request.destination_pages[i]);
    if (same_device) {
      KVSIM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
    } else {
      KVSIM_CUDA_CHECK(
          cudaMemcpyPeerAsync(to, destination.device(), from, source_.device(), bytes, stream));
    }
  }
  record.done = take_event();
  KVSIM_CUDA_CHECK(cudaEventRecord(record.done, stream));
  const core::transfer_handle handle = next_handle_++;
  transfers_.emplace(handle, std::move(record));
  return handle;
}

core::transfer_poll cuda_transfer_engine::poll(core::transfer_handle handle) {
  const auto it = transfers_.find(handle);
  if (it == transfers_.end()) {
    throw real_backend_error("poll of transfer " + std::to_string(handle) + ", which rank " +
                             std::to_string(rank_) + " never started");
  }
  transfer_record& t = it->second;
  if (t.state != core::transfer_poll::in_flight) return t.state;
  const cudaError_t status = cudaEventQuery(t.done);
  if (status == cudaErrorNotReady) return t.state;
  // Any other answer is a device fault (sticky for the context), not a transfer outcome the
  // core could act on: the run ends with it.
  KVSIM_CUDA_CHECK(status);
  t.state = core::transfer_poll::succeeded;
  spare_events_.push_back(t.done);
  t.done = nullptr;
  ended_.push_back({handle, t.request, t.state, t.held_by != nullptr ? t.before_page : 0});
  return t.state;
}

bool cuda_transfer_engine::cancel(core::transfer_handle handle) {
  // Queued device work cannot be withdrawn: confirmed only once it has ended by itself.
  return poll(handle) != core::transfer_poll::in_flight;
}

void cuda_transfer_engine::hold(core::room_key owner, hold_gate& gate, std::uint32_t before_page) {
  auto* device_gate = dynamic_cast<cuda_gate*>(&gate);
  if (device_gate == nullptr) {
    throw real_backend_error("the CUDA transfer engine can only be held by a CUDA gate");
  }
  gates_[&gate] = device_gate;
  lanes_.hold(owner, gate, before_page);
}

std::vector<held_transfer> cuda_transfer_engine::held_at(const hold_gate& gate) const {
  std::vector<held_transfer> held;
  for (const auto& [handle, t] : transfers_) {
    if (t.held_by == &gate) held.push_back({handle, t.request, t.before_page});
  }
  return held;
}

std::vector<ended_transfer> cuda_transfer_engine::take_ended() {
  std::vector<ended_transfer> ended;
  ended.swap(ended_);
  return ended;
}

}  // namespace kvsim::real
