#pragma once
// HiCache storage on a GPU, for the prefetch scenarios: the "L3 storage" is a device buffer;
// a read writes the request's canary into its storage slots (fill kernel), then copies each
// slot into its host page (device to host, into pinned memory) on the rank's storage stream,
// with an event behind the last page. A held read has a gate kernel in front of its copies,
// so the storage I/O is really in flight (active) while the abort runs.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>

#include "real_backend/cuda/cuda_gate.h"
#include "real_backend/data_plane.h"

namespace kvsim::real {

// One rank's host pages in pinned memory: a device-to-host copy into pageable memory would
// be synchronous for the host thread, and a held read would then block its caller.
class pinned_host_pages final : public host_page_memory {
 public:
  pinned_host_pages(std::uint32_t pages, std::uint32_t page_bytes);
  ~pinned_host_pages() override;
  pinned_host_pages(const pinned_host_pages&) = delete;
  pinned_host_pages& operator=(const pinned_host_pages&) = delete;

  std::uint32_t pages() const override { return pages_; }
  std::uint32_t page_bytes() const override { return page_bytes_; }
  const std::uint8_t* page(core::page_index page) const override;
  std::uint8_t* writable_page(core::page_index page);

 private:
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::uint8_t* base_ = nullptr;
};

class cuda_storage final : public gated_storage {
 public:
  cuda_storage(int device, core::rank_id rank, pinned_host_pages& host);
  ~cuda_storage() override;
  cuda_storage(const cuda_storage&) = delete;
  cuda_storage& operator=(const cuda_storage&) = delete;

  core::storage_handle read_pages(core::room_key owner,
                                  const std::vector<core::page_index>& host_pages) override;
  core::storage_poll poll(core::storage_handle handle) override;
  core::storage_poll wait(core::storage_handle handle) override;
  void hold(core::room_key owner, hold_gate& gate) override;  // `gate` must be a cuda_gate
  void wait_idle() override;

 private:
  struct read_record {
    cudaEvent_t done = nullptr;
    core::storage_poll state = core::storage_poll::in_flight;
  };

  int device_;
  core::rank_id rank_;
  pinned_host_pages& host_;
  std::uint8_t* slots_ = nullptr;  // one storage slot per host page
  cudaStream_t stream_ = nullptr;
  std::map<core::storage_handle, read_record> reads_;
  std::map<core::room_key, cuda_gate*> holds_;
  core::storage_handle next_handle_ = 1;
};

}  // namespace kvsim::real
