#pragma once
// The canary pattern of KV pages, one definition for the simulator's KV memory
// (sim/kv_memory.cc) and the real backend's pages and CUDA kernels (real_backend/canary.h), so
// that a finding on the GPU means what it means in the simulator: a writer fills a page with
// bytes derived from (room, generation, logical page, offset); the first 16 bytes carry the
// writer's identity (room u64, generation u32, logical page u32, little-endian), so a reader
// that finds foreign bytes can also say whose they are.
//
// __host__ __device__ functions, standard headers only, C++17: nvcc compiles this too.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KVSIM_HOST_DEVICE __host__ __device__
#else
#define KVSIM_HOST_DEVICE
#endif

namespace kvsim::spec {

inline constexpr std::uint32_t canary_header_bytes = 16;

struct canary_identity {
  std::uint64_t room = 0;
  std::uint32_t generation = 0;
  std::uint32_t logical_page = 0;
};

// Spelled out, not defaulted: nvcc compiles this header as C++17 (real_backend/CMakeLists.txt).
inline bool operator==(const canary_identity& a, const canary_identity& b) {
  return a.room == b.room && a.generation == b.generation && a.logical_page == b.logical_page;
}

// The byte at `offset` (>= canary_header_bytes) of a page written for `id` (a SplitMix/Murmur
// finaliser).
KVSIM_HOST_DEVICE inline std::uint8_t canary_byte(std::uint64_t room, std::uint32_t generation,
                                                  std::uint32_t logical_page,
                                                  std::uint32_t offset) {
  std::uint64_t x = room * 0x9e3779b97f4a7c15ULL ^ (static_cast<std::uint64_t>(generation) << 40) ^
                    (static_cast<std::uint64_t>(logical_page) << 20) ^ offset;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<std::uint8_t>(x);
}

// The byte at `offset` (< canary_header_bytes) of the identity header, little-endian: what a
// memcpy of the fields writes on a little-endian host.
KVSIM_HOST_DEVICE inline std::uint8_t canary_header_byte(std::uint64_t room,
                                                         std::uint32_t generation,
                                                         std::uint32_t logical_page,
                                                         std::uint32_t offset) {
  if (offset < 8) return static_cast<std::uint8_t>(room >> (8 * offset));
  if (offset < 12) return static_cast<std::uint8_t>(generation >> (8 * (offset - 8)));
  return static_cast<std::uint8_t>(logical_page >> (8 * (offset - 12)));
}

// Any byte of a page written for the identity.
KVSIM_HOST_DEVICE inline std::uint8_t canary_page_byte(std::uint64_t room, std::uint32_t generation,
                                                       std::uint32_t logical_page,
                                                       std::uint32_t offset) {
  return offset < canary_header_bytes ? canary_header_byte(room, generation, logical_page, offset)
                                      : canary_byte(room, generation, logical_page, offset);
}

}  // namespace kvsim::spec
