#include "sim/decision.h"

#include "spec/trace_format.h"

namespace kvsim::sim {

const char* to_string(decision_kind kind) {
  switch (kind) {
    case decision_kind::schedule:
      return "schedule";
    case decision_kind::fault:
      return "fault";
    case decision_kind::data:
      return "data";
  }
  return "unknown";
}

std::uint64_t decision_hash(std::span<const decision> decisions) {
  std::uint64_t hash = spec::decision_hash_basis;
  const auto mix = [&hash](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (value >> (8 * i)) & 0xff;
      hash *= spec::decision_hash_prime;
    }
  };
  for (const decision& d : decisions) {
    mix(static_cast<std::uint64_t>(d.kind));
    mix(d.options);
    mix(d.chosen);
    mix(d.subject);
  }
  return hash;
}

}  // namespace kvsim::sim
