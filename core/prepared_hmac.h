#pragma once
// HMAC-SHA-512-256 (libsodium's crypto_auth) under one key and one domain tag, with the key's
// inner and outer hashes and the tag absorbed once: each message then costs a copy of that
// state and two SHA-512 blocks, instead of a key schedule and four. The MACs are byte for
// byte those of crypto_auth over tag || message. The prepared state is as secret as the key
// and is wiped with it.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace kvsim::core {

inline constexpr std::size_t hmac_key_bytes = 32;
inline constexpr std::size_t hmac_bytes = 32;

class prepared_hmac {
 public:
  prepared_hmac(std::span<const std::uint8_t, hmac_key_bytes> key, std::string_view domain);
  prepared_hmac(const prepared_hmac&) = default;
  prepared_hmac& operator=(const prepared_hmac&) = default;
  ~prepared_hmac();

  // The MAC of the concatenation of `parts` after the domain tag.
  std::array<std::uint8_t, hmac_bytes> sign(
      std::initializer_list<std::span<const std::uint8_t>> parts) const;
  // True when `mac` is this key's MAC of `parts`; compared in constant time.
  bool verify(std::span<const std::uint8_t, hmac_bytes> mac,
              std::initializer_list<std::span<const std::uint8_t>> parts) const;

  // libsodium's crypto_auth_hmacsha512256_state, held as bytes so that this header does not
  // need <sodium.h> (an installed consumer links libsodium but need not see its headers);
  // prepared_hmac.cc checks the size.
  static constexpr std::size_t state_bytes = 416;

 private:
  alignas(8) std::array<std::uint8_t, state_bytes> prepared_{};
};

// Little-endian bytes of `value` at `at` in `out`; returns the position after them.
template <std::size_t N, class T>
std::size_t put_le(std::array<std::uint8_t, N>& out, std::size_t at, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[at + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
  return at + sizeof(T);
}

}  // namespace kvsim::core
