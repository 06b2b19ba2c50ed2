#include "real_backend/cuda/cuda_storage.h"

#include <string>
#include <utility>

#include "real_backend/cuda/cuda_check.h"
#include "real_backend/cuda/kernels.h"

namespace kvsim::real {

pinned_host_pages::pinned_host_pages(std::uint32_t pages, std::uint32_t page_bytes)
    : pages_(pages), page_bytes_(page_bytes) {
  const std::size_t bytes = std::size_t{pages} * page_bytes;
  KVSIM_CUDA_CHECK(cudaHostAlloc(&base_, bytes, cudaHostAllocPortable));
  for (std::size_t i = 0; i < bytes; ++i) base_[i] = 0;
}

pinned_host_pages::~pinned_host_pages() { KVSIM_CUDA_WARN(cudaFreeHost(base_)); }

const std::uint8_t* pinned_host_pages::page(core::page_index page) const {
  if (page >= pages_) {
    throw real_backend_error("host page " + std::to_string(page) + " is outside the " +
                             std::to_string(pages_) + " host pages of this rank");
  }
  return base_ + std::size_t{page} * page_bytes_;
}

std::uint8_t* pinned_host_pages::writable_page(core::page_index page) {
  return const_cast<std::uint8_t*>(std::as_const(*this).page(page));
}

cuda_storage::cuda_storage(int device, core::rank_id rank, pinned_host_pages& host)
    : device_(device), rank_(rank), host_(host) {
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  preload_kernels();
  KVSIM_CUDA_CHECK(cudaMalloc(&slots_, std::size_t{host_.pages()} * host_.page_bytes()));
  KVSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

cuda_storage::~cuda_storage() {
  KVSIM_CUDA_WARN(cudaSetDevice(device_));
  // The host pages outlive this object only if the reads are over: wait for them (the
  // script opened every gate before tearing down).
  if (stream_ != nullptr) {
    KVSIM_CUDA_WARN(cudaStreamSynchronize(stream_));
    KVSIM_CUDA_WARN(cudaStreamDestroy(stream_));
  }
  for (auto& [handle, r] : reads_) {
    if (r.done != nullptr) KVSIM_CUDA_WARN(cudaEventDestroy(r.done));
  }
  if (slots_ != nullptr) KVSIM_CUDA_WARN(cudaFree(slots_));
}

core::storage_handle cuda_storage::read_pages(core::room_key owner,
                                              const std::vector<core::page_index>& host_pages) {
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  const std::uint32_t bytes = host_.page_bytes();
  for (std::uint32_t j = 0; j < host_pages.size(); ++j) {
    (void)host_.page(host_pages[j]);  // range check before anything is queued
    std::uint8_t* slot = slots_ + std::size_t{host_pages[j]} * bytes;
    launch_fill_canary(slot, bytes, {owner.room, owner.generation, j}, stream_);
  }
  if (const auto hold = holds_.find(owner); hold != holds_.end()) hold->second->hold(stream_);
  for (const core::page_index page : host_pages) {
    KVSIM_CUDA_CHECK(cudaMemcpyAsync(host_.writable_page(page), slots_ + std::size_t{page} * bytes,
                                     bytes, cudaMemcpyDeviceToHost, stream_));
  }
  read_record record;
  KVSIM_CUDA_CHECK(cudaEventCreateWithFlags(&record.done, cudaEventDisableTiming));
  KVSIM_CUDA_CHECK(cudaEventRecord(record.done, stream_));
  const core::storage_handle handle = next_handle_++;
  reads_.emplace(handle, record);
  return handle;
}

core::storage_poll cuda_storage::poll(core::storage_handle handle) {
  const auto it = reads_.find(handle);
  if (it == reads_.end()) {
    throw real_backend_error("poll of storage read " + std::to_string(handle) + ", which rank " +
                             std::to_string(rank_) + " never started");
  }
  read_record& r = it->second;
  if (r.state != core::storage_poll::in_flight) return r.state;
  const cudaError_t status = cudaEventQuery(r.done);
  if (status == cudaErrorNotReady) return r.state;
  KVSIM_CUDA_CHECK(status);
  r.state = core::storage_poll::completed;
  KVSIM_CUDA_CHECK(cudaEventDestroy(r.done));
  r.done = nullptr;
  return r.state;
}

// Blocks on the read's CUDA event (the host thread waits in the CUDA driver, not in a loop
// of ours), then reports the read as poll does.
core::storage_poll cuda_storage::wait(core::storage_handle handle) {
  const auto it = reads_.find(handle);
  if (it == reads_.end()) {
    throw real_backend_error("wait for storage read " + std::to_string(handle) + ", which rank " +
                             std::to_string(rank_) + " never started");
  }
  if (it->second.state == core::storage_poll::in_flight) {
    KVSIM_CUDA_CHECK(cudaEventSynchronize(it->second.done));
  }
  return poll(handle);
}

void cuda_storage::wait_idle() {
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void cuda_storage::hold(core::room_key owner, hold_gate& gate) {
  auto* device_gate = dynamic_cast<cuda_gate*>(&gate);
  if (device_gate == nullptr)
    throw real_backend_error("CUDA storage can only be held by a CUDA gate");
  holds_[owner] = device_gate;
}

}  // namespace kvsim::real
