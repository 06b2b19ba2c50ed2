#include "real_backend/cuda/cuda_page_pool.h"

#include <string>

#include "real_backend/cuda/cuda_check.h"

namespace kvsim::real {

cuda_page_pool::cuda_page_pool(int device, std::uint32_t pages, std::uint32_t page_bytes)
    : device_(device), pages_(pages), page_bytes_(page_bytes) {
  prepare(page_bytes);
  const std::size_t bytes = std::size_t{pages_} * page_bytes_;
  KVSIM_CUDA_CHECK(cudaMalloc(&base_, bytes));
  // Fresh pages hold zeros, which are nobody's canary.
  KVSIM_CUDA_CHECK(cudaMemsetAsync(base_, 0, bytes, stream_));
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

cuda_page_pool::cuda_page_pool(opened_tag, int device, std::uint32_t pages,
                               std::uint32_t page_bytes, const cudaIpcMemHandle_t& handle)
    : device_(device), pages_(pages), page_bytes_(page_bytes) {
  prepare(page_bytes);
  void* base = nullptr;
  KVSIM_CUDA_CHECK(cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess));
  base_ = static_cast<std::uint8_t*>(base);
  opened_ = true;
}

std::unique_ptr<cuda_page_pool> cuda_page_pool::open_exported(int device, std::uint32_t pages,
                                                              std::uint32_t page_bytes,
                                                              const cudaIpcMemHandle_t& handle) {
  return std::unique_ptr<cuda_page_pool>(
      new cuda_page_pool(opened_tag{}, device, pages, page_bytes, handle));
}

void cuda_page_pool::prepare(std::uint32_t page_bytes) {
  if (page_bytes <= canary_header_bytes) {
    throw real_backend_error("a KV page must hold more than its " +
                             std::to_string(canary_header_bytes) + "-byte canary header (got " +
                             std::to_string(page_bytes) + " bytes)");
  }
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  preload_kernels();
  KVSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  KVSIM_CUDA_CHECK(cudaMalloc(&verdict_device_, sizeof(canary_verdict)));
  KVSIM_CUDA_CHECK(cudaMallocHost(&verdict_host_, sizeof(canary_verdict)));
}

cudaIpcMemHandle_t cuda_page_pool::exported() const {
  cudaIpcMemHandle_t handle{};
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  KVSIM_CUDA_CHECK(cudaIpcGetMemHandle(&handle, base_));
  return handle;
}

cuda_page_pool::~cuda_page_pool() {
  KVSIM_CUDA_WARN(cudaSetDevice(device_));
  if (stream_ != nullptr) {
    KVSIM_CUDA_WARN(cudaStreamSynchronize(stream_));
    KVSIM_CUDA_WARN(cudaStreamDestroy(stream_));
  }
  if (verdict_host_ != nullptr) KVSIM_CUDA_WARN(cudaFreeHost(verdict_host_));
  if (verdict_device_ != nullptr) KVSIM_CUDA_WARN(cudaFree(verdict_device_));
  if (base_ != nullptr && opened_) KVSIM_CUDA_WARN(cudaIpcCloseMemHandle(base_));
  if (base_ != nullptr && !opened_) KVSIM_CUDA_WARN(cudaFree(base_));
}

std::uint8_t* cuda_page_pool::page_pointer(core::page_index page) const {
  if (page >= pages_) {
    throw real_backend_error("page " + std::to_string(page) + " is outside the pool of " +
                             std::to_string(pages_) + " pages on device " +
                             std::to_string(device_));
  }
  return base_ + std::size_t{page} * page_bytes_;
}

void cuda_page_pool::write_canary(core::page_index page, core::room_key writer,
                                  std::uint32_t logical_page) {
  std::uint8_t* data = page_pointer(page);
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  launch_fill_canary(data, page_bytes_, {writer.room, writer.generation, logical_page}, stream_);
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

page_check cuda_page_pool::verify(core::page_index page, core::room_key reader,
                                  std::uint32_t logical_page) {
  const std::uint8_t* data = page_pointer(page);
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  KVSIM_CUDA_CHECK(cudaMemsetAsync(verdict_device_, 0, sizeof(canary_verdict), stream_));
  launch_verify_canary(data, page_bytes_, {reader.room, reader.generation, logical_page},
                       verdict_device_, stream_);
  KVSIM_CUDA_CHECK(cudaMemcpyAsync(verdict_host_, verdict_device_, sizeof(canary_verdict),
                                   cudaMemcpyDeviceToHost, stream_));
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  page_check check;
  check.intact = verdict_host_->expected_mismatches == 0;
  if (verdict_host_->claimed_mismatches == 0) {
    check.found = canary_identity{verdict_host_->claimed_room, verdict_host_->claimed_generation,
                                  verdict_host_->claimed_logical_page};
  }
  return check;
}

std::vector<std::uint8_t> cuda_page_pool::read_page(core::page_index page) {
  const std::uint8_t* data = page_pointer(page);
  std::vector<std::uint8_t> bytes(page_bytes_);
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  KVSIM_CUDA_CHECK(
      cudaMemcpyAsync(bytes.data(), data, page_bytes_, cudaMemcpyDeviceToHost, stream_));
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return bytes;
}

}  // namespace kvsim::real
