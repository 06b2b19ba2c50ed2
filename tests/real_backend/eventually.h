#pragma once
// Polls `done` until it holds or `within` has passed: for work that lands on another thread
// or on the device (copies, gates), where the test can only wait and look.
#include <chrono>
#include <thread>

namespace kvsim::testing {

template <class Done>
bool eventually(Done done, std::chrono::milliseconds within = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace kvsim::testing
