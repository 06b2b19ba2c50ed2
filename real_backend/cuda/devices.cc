#include "real_backend/cuda/devices.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "real_backend/cuda/cuda_check.h"

namespace kvsim::real {

device_probe probe_devices() {
  // Only if unset: a user who asks for lazy loading keeps it (and the preloads still run).
  (void)setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  device_probe probe;
  const cudaError_t status = cudaGetDeviceCount(&probe.count);
  if (status != cudaSuccess) {
    probe.count = 0;
    probe.error = "cudaGetDeviceCount: " + cuda_error_text(status);
    (void)cudaGetLastError();  // not sticky: leave no trace for later checks
  } else if (probe.count == 0) {
    probe.error = "cudaGetDeviceCount: 0 devices";
  }
  return probe;
}

std::string device_name(int device) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "device " + std::to_string(device);
  }
  return properties.name;
}

bool enable_peer_access(int from, int to) {
  if (from == to) return true;
  int can = 0;
  KVSIM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (can == 0) return false;
  KVSIM_CUDA_CHECK(cudaSetDevice(from));
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    return true;
  }
  KVSIM_CUDA_CHECK(status);
  return true;
}

}  // namespace kvsim::real
