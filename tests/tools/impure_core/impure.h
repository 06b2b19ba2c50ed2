#pragma once
// Fixture for tests/tools: a "core" file that breaks every purity rule. Never compiled.
#include "sim/scheduler.h"
#include "real_backend/cuda_pool.h"
#include <boost/fiber/all.hpp>
#include <cuda_runtime.h>
#include <nccl.h>
#include <thread>
#include <chrono>

inline int impure() {
  std::thread worker([] {});
  worker.join();
  thread_local int cache = 0;
  return std::rand() + cache + static_cast<int>(time(nullptr));
}
