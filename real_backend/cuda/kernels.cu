#include "real_backend/cuda/cuda_check.h"
#include "real_backend/cuda/kernels.h"

namespace kvsim::real {
namespace {

constexpr unsigned int threads_per_block = 256;
constexpr unsigned int blocks_max = 1024;

unsigned int blocks_for(std::uint32_t bytes) {
  const unsigned int blocks = (bytes + threads_per_block - 1) / threads_per_block;
  return blocks < 1 ? 1 : (blocks > blocks_max ? blocks_max : blocks);
}

__global__ void fill_canary_kernel(std::uint8_t* page, std::uint32_t page_bytes,
                                   canary_identity writer) {
  const std::uint32_t stride = blockDim.x * gridDim.x;
  for (std::uint32_t offset = blockIdx.x * blockDim.x + threadIdx.x; offset < page_bytes;
       offset += stride) {
    page[offset] = canary_page_byte(writer.room, writer.generation, writer.logical_page, offset);
  }
}

__global__ void verify_canary_kernel(const std::uint8_t* page, std::uint32_t page_bytes,
                                     canary_identity reader, canary_verdict* verdict) {
  // Every thread reads the header itself: the page is small and this avoids a second pass.
  unsigned long long room = 0;
  unsigned int generation = 0;
  unsigned int logical = 0;
  for (unsigned int i = 0; i < 8; ++i) room |= static_cast<unsigned long long>(page[i]) << (8 * i);
  for (unsigned int i = 0; i < 4; ++i) {
    generation |= static_cast<unsigned int>(page[8 + i]) << (8 * i);
    logical |= static_cast<unsigned int>(page[12 + i]) << (8 * i);
  }
  unsigned int expected_bad = 0;
  unsigned int claimed_bad = 0;
  const std::uint32_t stride = blockDim.x * gridDim.x;
  for (std::uint32_t offset = blockIdx.x * blockDim.x + threadIdx.x; offset < page_bytes;
       offset += stride) {
    const std::uint8_t b = page[offset];
    if (b != canary_page_byte(reader.room, reader.generation, reader.logical_page, offset)) {
      ++expected_bad;
    }
    if (offset >= canary_header_bytes && b != canary_byte(room, generation, logical, offset)) {
      ++claimed_bad;
    }
  }
  if (expected_bad != 0) atomicAdd(&verdict->expected_mismatches, expected_bad);
  if (claimed_bad != 0) atomicAdd(&verdict->claimed_mismatches, claimed_bad);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    verdict->claimed_room = room;
    verdict->claimed_generation = generation;
    verdict->claimed_logical_page = logical;
  }
}

__global__ void gate_kernel(const volatile std::uint32_t* open, volatile std::uint32_t* arrived) {
  // Stream order: this runs only after every copy queued before it on the stream has
  // completed, so "arrived" also says that those pages have landed.
  *arrived = 1u;
  __threadfence_system();
  while (*open == 0u) __nanosleep(2000);
  __threadfence_system();
}

// A launch reports its own configuration errors through cudaGetLastError; clear what an
// earlier call may have left there (cudaErrorNotReady of an event query is not an error) so
// that the check after the launch names this launch only.
void clear_last_error() { (void)cudaGetLastError(); }

}  // namespace

void launch_fill_canary(std::uint8_t* page, std::uint32_t page_bytes, canary_identity writer,
                        cudaStream_t stream) {
  clear_last_error();
  fill_canary_kernel<<<blocks_for(page_bytes), threads_per_block, 0, stream>>>(page, page_bytes,
                                                                               writer);
  KVSIM_CUDA_CHECK(cudaGetLastError());
}

void launch_verify_canary(const std::uint8_t* page, std::uint32_t page_bytes,
                          canary_identity reader, canary_verdict* verdict, cudaStream_t stream) {
  clear_last_error();
  verify_canary_kernel<<<blocks_for(page_bytes), threads_per_block, 0, stream>>>(page, page_bytes,
                                                                                 reader, verdict);
  KVSIM_CUDA_CHECK(cudaGetLastError());
}

void launch_gate(const volatile std::uint32_t* open, volatile std::uint32_t* arrived,
                 cudaStream_t stream) {
  clear_last_error();
  gate_kernel<<<1, 1, 0, stream>>>(open, arrived);
  KVSIM_CUDA_CHECK(cudaGetLastError());
}

void preload_kernels() {
  cudaFuncAttributes attributes{};
  KVSIM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, fill_canary_kernel));
  KVSIM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, verify_canary_kernel));
  KVSIM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, gate_kernel));
}

}  // namespace kvsim::real
