#pragma once
// FNV-1a over bytes: the digest tests use to compare trace files run by run.
#include <cstdint>
#include <string>

namespace kvsim::testing {

inline std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace kvsim::testing
