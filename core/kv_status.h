#pragma once
// Transfer status of a room. The numeric order is the protocol: ranks agree on a request's
// status with all_reduce(MIN), so one Failed rank fails the request everywhere (DOMAIN.md).
#include <cstdint>

namespace kvsim::core {

enum class kv_status : std::uint8_t {
  failed = 0,
  bootstrapping = 1,
  waiting_for_input = 2,
  transferring = 3,
  success = 4,
};

const char* to_string(kv_status status);

// Failed and Success end a transfer; nothing moves a room out of either.
inline bool is_terminal(kv_status status) {
  return status == kv_status::failed || status == kv_status::success;
}

}  // namespace kvsim::core
