#include "real_backend/cuda/cuda_check.h"

#include <iostream>

namespace kvsim::real {
namespace {

std::string where(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

}  // namespace

std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw real_backend_error(where(file, line) + ": " + call + " failed: " + cuda_error_text(status));
}

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  throw real_backend_error(where(file, line) + ": " + call + " failed: NCCL error " +
                           std::to_string(static_cast<int>(status)) + " (" +
                           ncclGetErrorString(status) + ")");
}

void warn_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  if (status == cudaSuccess) return;
  std::cerr << "kvsim real: warning: " << where(file, line) << ": " << call
            << " failed: " << cuda_error_text(status) << "\n";
}

}  // namespace kvsim::real
