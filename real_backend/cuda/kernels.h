#pragma once
// The real backend's only device code (kernels.cu): canary fill and verify, and the gate.
// Host code calls these launchers; each launches on `stream` of the current device and
// checks the launch.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "real_backend/canary.h"

namespace kvsim::real {

// What the verify kernel found in one page; zeroed by the caller before the launch.
struct canary_verdict {
  unsigned int expected_mismatches;  // bytes that differ from the reader's canary
  unsigned int claimed_mismatches;   // canary bytes that differ from the header's own writer
  unsigned long long claimed_room;
  unsigned int claimed_generation;
  unsigned int claimed_logical_page;
};

void launch_fill_canary(std::uint8_t* page, std::uint32_t page_bytes, canary_identity writer,
                        cudaStream_t stream);
void launch_verify_canary(const std::uint8_t* page, std::uint32_t page_bytes,
                          canary_identity reader, canary_verdict* verdict, cudaStream_t stream);
// A one-thread kernel that sets *arrived, then spins until *open is non-zero. Both flags are
// host-mapped pinned memory (cudaHostAllocMapped): the host opens the gate with a plain store.
void launch_gate(const volatile std::uint32_t* open, volatile std::uint32_t* arrived,
                 cudaStream_t stream);

// Loads every kernel above into the current device's context now. With lazy loading (the
// default since CUDA 12.2) a kernel's first launch may need a context synchronisation, which
// never completes while a gate kernel spins (CUDA C++ Programming Guide, "Lazy Loading",
// possible hazards: concurrent execution); cudaFuncGetAttributes loads a kernel eagerly.
void preload_kernels();

}  // namespace kvsim::real
