#include "real_backend/cuda/cuda_gate.h"

#include <atomic>

#include "real_backend/cuda/cuda_check.h"
#include "real_backend/cuda/kernels.h"

namespace kvsim::real {

cuda_gate::cuda_gate() {
  // Portable: visible to every device's context; mapped: the kernels read it over the bus.
  KVSIM_CUDA_CHECK(cudaHostAlloc(&flags_, 2 * sizeof(std::uint32_t),
                                 cudaHostAllocMapped | cudaHostAllocPortable));
  std::atomic_ref<std::uint32_t>(flags_[0]).store(0, std::memory_order_release);
  std::atomic_ref<std::uint32_t>(flags_[1]).store(0, std::memory_order_release);
}

// The words start as the shared memory does, zeroed (closed, not reached), and another process
// may already have opened them: nothing is written here.
cuda_gate::cuda_gate(std::uint32_t* shared_flags) : flags_(shared_flags), owns_flags_(false) {}

cuda_gate::~cuda_gate() {
  open();
  for (cudaEvent_t passed : passed_) {
    KVSIM_CUDA_WARN(cudaEventSynchronize(passed));
    KVSIM_CUDA_WARN(cudaEventDestroy(passed));
  }
  if (owns_flags_) KVSIM_CUDA_WARN(cudaFreeHost(flags_));
}

void cuda_gate::hold(cudaStream_t stream) {
  void* device_flags = nullptr;
  KVSIM_CUDA_CHECK(cudaHostGetDevicePointer(&device_flags, flags_, 0));
  auto* flags = static_cast<std::uint32_t*>(device_flags);
  cudaEvent_t passed = nullptr;
  KVSIM_CUDA_CHECK(cudaEventCreateWithFlags(&passed, cudaEventDisableTiming));
  passed_.push_back(passed);
  launch_gate(flags, flags + 1, stream);
  KVSIM_CUDA_CHECK(cudaEventRecord(passed, stream));
}

bool cuda_gate::reached() const {
  return std::atomic_ref<std::uint32_t>(flags_[1]).load(std::memory_order_acquire) != 0;
}

void cuda_gate::open() {
  std::atomic_ref<std::uint32_t>(flags_[0]).store(1, std::memory_order_release);
}

bool cuda_gate::is_open() const {
  return std::atomic_ref<std::uint32_t>(flags_[0]).load(std::memory_order_acquire) != 0;
}

}  // namespace kvsim::real
