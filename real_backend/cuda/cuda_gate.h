#pragma once
// A gate on the GPU: a one-thread kernel queued on a stream in front of a copy spins on a flag
// in host-mapped pinned memory, so the copies behind it stay in flight on the device until
// the host opens the gate with a plain store (no CUDA call, so opening never waits on the
// device). The kernel first raises an "arrived" flag: by stream order, everything queued
// before it has then landed. One gate may hold several streams, on any device.
//
// The destructor opens the gate before it frees the flags: a kernel left spinning would hang
// every later synchronisation of its device.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "real_backend/data_plane.h"

namespace kvsim::real {

class cuda_gate final : public hold_gate {
 public:
  cuda_gate();
  // A gate whose two flag words are `shared_flags`, in host memory that another process also
  // maps (the rank processes of `--data-plane cuda --ranks 2`, cuda_process_plane.h) and that
  // the caller registered with CUDA as mapped (cudaHostRegister): the script in one process
  // opens it with a store, the kernel of another spins on it. The caller owns the memory.
  explicit cuda_gate(std::uint32_t* shared_flags);
  ~cuda_gate() override;
  cuda_gate(const cuda_gate&) = delete;
  cuda_gate& operator=(const cuda_gate&) = delete;

  // Queues the gate kernel on `stream` (of the current device).
  void hold(cudaStream_t stream);
  bool reached() const override;
  void open() override;
  bool is_open() const override;

 private:
  std::uint32_t* flags_ = nullptr;  // [0] open, [1] arrived; cudaHostAllocMapped|Portable
  bool owns_flags_ = true;          // false: the caller's shared, registered words
  // One per held stream, recorded behind the kernel: the destructor waits for them before it
  // frees the flags that a kernel still queued on a stream would read.
  std::vector<cudaEvent_t> passed_;
};

}  // namespace kvsim::real
