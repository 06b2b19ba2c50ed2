#pragma once
// The core's clock on real hardware: steady host time in microseconds since construction
// (never the wall clock, which may jump).
#include <chrono>
#include <cstdint>

#include "core/ports.h"

namespace kvsim::real {

class steady_clock_port final : public core::clock {
 public:
  std::uint64_t now_us() const override {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::steady_clock::now() - start_)
                                          .count());
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace kvsim::real
