#pragma once
// The canary pattern of KV pages (spec/canary.h, the simulator's too) on the real backend's
// side: the pattern itself for the CUDA kernels (kernels.cu) and host code, and the host
// helpers that fill and check host pages (HiCache prefetches, tests). C++17: nvcc compiles
// this too.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "spec/canary.h"

namespace kvsim::real {

using spec::canary_byte;
using spec::canary_header_byte;
using spec::canary_header_bytes;
using spec::canary_identity;
using spec::canary_page_byte;

// --- host side (host pages of HiCache prefetches, tests) -----------------------------------

inline void fill_canary_host(std::uint8_t* page, std::uint32_t page_bytes, canary_identity id) {
  for (std::uint32_t offset = 0; offset < page_bytes; ++offset) {
    page[offset] = canary_page_byte(id.room, id.generation, id.logical_page, offset);
  }
}

inline bool matches_canary_host(const std::uint8_t* page, std::uint32_t page_bytes,
                                canary_identity id) {
  for (std::uint32_t offset = 0; offset < page_bytes; ++offset) {
    if (page[offset] != canary_page_byte(id.room, id.generation, id.logical_page, offset)) {
      return false;
    }
  }
  return true;
}

// The identity the header claims (whether or not the rest of the page agrees).
inline canary_identity claimed_identity_host(const std::uint8_t* page) {
  canary_identity id;
  for (std::uint32_t i = 0; i < 8; ++i) id.room |= static_cast<std::uint64_t>(page[i]) << (8 * i);
  for (std::uint32_t i = 0; i < 4; ++i) {
    id.generation |= static_cast<std::uint32_t>(page[8 + i]) << (8 * i);
    id.logical_page |= static_cast<std::uint32_t>(page[12 + i]) << (8 * i);
  }
  return id;
}

// Whose canary the page holds, if its bytes are entirely one writer's canary.
inline std::optional<canary_identity> owner_of_bytes_host(const std::uint8_t* page,
                                                          std::uint32_t page_bytes) {
  const canary_identity claimed = claimed_identity_host(page);
  if (!matches_canary_host(page, page_bytes, claimed)) return std::nullopt;
  return claimed;
}

}  // namespace kvsim::real
