#pragma once
// The simulator's only source of randomness: a seeded xoshiro256** generator, seeded through
// SplitMix64 as its authors recommend (Blackman and Vigna, "Scrambled linear pseudorandom
// number generators", 2018). Written out here rather than taken from <random> because the
// standard distributions are implementation-defined: the same seed must give the same run
// with every standard library and build type.
#include <cstdint>

namespace kvsim::spec {

class rng {
 public:
  explicit rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : state_) word = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound) by Lemire's multiply-shift; bias below 2^-32 for our small bounds.
  std::uint32_t below(std::uint32_t bound) {
    return static_cast<std::uint32_t>(((next() >> 32) * bound) >> 32);
  }

  // True with probability `per_million` / 1'000'000.
  bool chance(std::uint32_t per_million) { return below(1'000'000) < per_million; }

  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4]{};
};

}  // namespace kvsim::spec
