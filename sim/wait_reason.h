#pragma once
// What a blocked actor waits on, kept as numbers and rendered as text only when a deadlock
// report needs it: blocking is on the hot path of every run, deadlocks are rare.
#include <cstdint>
#include <string>

namespace kvsim::sim {

enum class wait_kind : std::uint8_t {
  sleep,         // until = a (virtual us)
  queue,         // a named sim wait queue (label)
  collective,    // group a, sequence b, rank c, op label
  transfer_end,  // transfer a of rank b
};

struct wait_reason {
  wait_kind kind = wait_kind::queue;
  const char* label = "";  // static text or a string owned by the waited-on object
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint64_t c = 0;
};

inline std::string describe(const wait_reason& reason) {
  switch (reason.kind) {
    case wait_kind::sleep:
      return "sleeping until t=" + std::to_string(reason.a) + "us";
    case wait_kind::queue:
      return reason.label;
    case wait_kind::collective:
      return "collective g" + std::to_string(reason.a) + " seq " + std::to_string(reason.b) + " " +
             reason.label + " on rank " + std::to_string(reason.c);
    case wait_kind::transfer_end:
      return "transfer " + std::to_string(reason.a) + " of rank " + std::to_string(reason.b) +
             " to end";
  }
  return "unknown";
}

}  // namespace kvsim::sim
