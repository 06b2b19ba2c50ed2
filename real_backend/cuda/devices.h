#pragma once
// Which CUDA devices this process sees, asked once and answered without throwing: a machine
// without a GPU (or without a driver) is an ordinary answer here, not an error.
#include <cstdint>
#include <string>

namespace kvsim::real {

struct device_probe {
  int count = 0;
  std::string error;  // when count is 0: "cudaGetDeviceCount: cudaErrorNoDevice (...)"
};

// Sets CUDA_MODULE_LOADING=EAGER for this process unless the user chose a mode (see
// kernels.h, preload_kernels: a lazily loaded kernel may never load while a gate spins),
// then asks cudaGetDeviceCount. Call it before any other CUDA call of the process.
device_probe probe_devices();

// "NVIDIA H200" (or "device N" when the name cannot be read).
std::string device_name(int device);

// Lets `from` read and write `to`'s memory directly (NVLink/PCIe peer access) when the pair
// supports it; cudaMemcpyPeerAsync works either way, staging through the host without it.
// True when peer access is on.
bool enable_peer_access(int from, int to);

}  // namespace kvsim::real
