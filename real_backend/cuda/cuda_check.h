#pragma once
// Every CUDA and NCCL call of the real backend goes through these checks: a failure becomes a
// real_backend_error naming the file and line, the call as written, and the library's own
// error name and string, e.g.
//   real_backend/cuda/cuda_page_pool.cc:41: cudaMalloc(&base_, bytes) failed: cudaErrorMemoryAllocation
//   (out of memory)
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "real_backend/errors.h"

namespace kvsim::real {

void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_nccl(ncclResult_t status, const char* call, const char* file, int line);

// For destructors, which must not throw: prints the same line to stderr and goes on.
void warn_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept;

// "cudaErrorNoDevice (no CUDA-capable device is detected)"
std::string cuda_error_text(cudaError_t status);

}  // namespace kvsim::real

#define KVSIM_CUDA_CHECK(call) ::kvsim::real::check_cuda((call), #call, __FILE__, __LINE__)
#define KVSIM_NCCL_CHECK(call) ::kvsim::real::check_nccl((call), #call, __FILE__, __LINE__)
#define KVSIM_CUDA_WARN(call) ::kvsim::real::warn_cuda((call), #call, __FILE__, __LINE__)
