// Fixture for tests/tools: a "sim" file that breaks every determinism rule. Never compiled.
#include "scenarios/transfer_world.h"
#include <thread>
#include <random>
#include <map>
#include <unordered_map>

struct fiber_state;
std::unordered_map<fiber_state*, int> by_pointer;

inline int impure() {
  std::mt19937 engine(std::random_device{}());
  const auto now = std::chrono::steady_clock::now();
  thread_local int cache = 0;
  return static_cast<int>(engine()) + cache + std::rand() + static_cast<int>(now.time_since_epoch().count());
}
