#pragma once
// GPU tests skip, with the reason, where cudaGetDeviceCount finds no device (CI, laptops).
#include <gtest/gtest.h>

#include "real_backend/cuda/devices.h"

namespace kvsim::testing {

inline const real::device_probe& gpu_probe() {
  static const real::device_probe probe = real::probe_devices();
  return probe;
}

}  // namespace kvsim::testing

#define KVSIM_REQUIRE_GPU()                                                      \
  do {                                                                           \
    if (::kvsim::testing::gpu_probe().count == 0) {                              \
      GTEST_SKIP() << "no CUDA device: " << ::kvsim::testing::gpu_probe().error; \
    }                                                                            \
  } while (false)
