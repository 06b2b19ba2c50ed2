#pragma once
// One rank's KV pages on a GPU: one cudaMalloc'd region cut into `pages` pages of
// `page_bytes`. Canary fill and verify run as kernels (kernels.cu) on the pool's own
// non-blocking stream, so they never wait behind a transfer that a gate holds on another
// stream; each call is complete when it returns.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "real_backend/data_plane.h"
#include "real_backend/cuda/kernels.h"

namespace kvsim::real {

class cuda_page_pool final : public page_memory {
 public:
  cuda_page_pool(int device, std::uint32_t pages, std::uint32_t page_bytes);
  // Another process's pool, opened from the handle it exported (CUDA IPC, on the same device):
  // its pages are that pool's memory, left as they are; closed, not freed, at the end.
  static std::unique_ptr<cuda_page_pool> open_exported(int device, std::uint32_t pages,
                                                       std::uint32_t page_bytes,
                                                       const cudaIpcMemHandle_t& handle);
  ~cuda_page_pool() override;
  cuda_page_pool(const cuda_page_pool&) = delete;
  cuda_page_pool& operator=(const cuda_page_pool&) = delete;

  std::uint32_t pages() const override { return pages_; }
  std::uint32_t page_bytes() const override { return page_bytes_; }
  void write_canary(core::page_index page, core::room_key writer,
                    std::uint32_t logical_page) override;
  page_check verify(core::page_index page, core::room_key reader,
                    std::uint32_t logical_page) override;

  int device() const { return device_; }
  // The handle another process opens this pool with (open_exported).
  cudaIpcMemHandle_t exported() const;
  // The page's device address (what a copy reads or writes).
  std::uint8_t* page_pointer(core::page_index page) const;
  // The page's bytes, copied to the host (tests).
  std::vector<std::uint8_t> read_page(core::page_index page);

 private:
  struct opened_tag {};
  cuda_page_pool(opened_tag, int device, std::uint32_t pages, std::uint32_t page_bytes,
                 const cudaIpcMemHandle_t& handle);
  // The stream, the verdict words and the kernels, for a pool of either kind.
  void prepare(std::uint32_t page_bytes);

  int device_;
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::uint8_t* base_ = nullptr;
  bool opened_ = false;  // base_ is another process's pool (cudaIpcCloseMemHandle, not cudaFree)
  cudaStream_t stream_ = nullptr;
  canary_verdict* verdict_device_ = nullptr;
  canary_verdict* verdict_host_ = nullptr;  // pinned: the async copy back needs it
};

}  // namespace kvsim::real
