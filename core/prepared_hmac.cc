#include "core/prepared_hmac.h"

#include <sodium.h>

#include <cstring>

#include "core/invariant.h"

namespace kvsim::core {

static_assert(hmac_key_bytes == crypto_auth_KEYBYTES);
static_assert(hmac_bytes == crypto_auth_BYTES);
static_assert(sizeof(crypto_auth_hmacsha512256_state) == prepared_hmac::state_bytes);
static_assert(alignof(crypto_auth_hmacsha512256_state) <= 8);

prepared_hmac::prepared_hmac(std::span<const std::uint8_t, hmac_key_bytes> key,
                             std::string_view domain) {
  // sodium_init is idempotent (returns 1 when already done); -1 means no usable RNG/CPU
  // features, and then no MAC can be trusted: fail closed.
  KVSIM_INVARIANT(sodium_init() >= 0, "libsodium failed to initialise");
  crypto_auth_hmacsha512256_state state;
  crypto_auth_hmacsha512256_init(&state, key.data(), key.size());
  crypto_auth_hmacsha512256_update(&state, reinterpret_cast<const unsigned char*>(domain.data()),
                                   domain.size());
  std::memcpy(prepared_.data(), &state, sizeof state);
  sodium_memzero(&state, sizeof state);
}

prepared_hmac::~prepared_hmac() { sodium_memzero(prepared_.data(), prepared_.size()); }

std::array<std::uint8_t, hmac_bytes> prepared_hmac::sign(
    std::initializer_list<std::span<const std::uint8_t>> parts) const {
  crypto_auth_hmacsha512256_state state;
  std::memcpy(&state, prepared_.data(), sizeof state);
  for (const auto part : parts) crypto_auth_hmacsha512256_update(&state, part.data(), part.size());
  std::array<std::uint8_t, hmac_bytes> mac{};
  crypto_auth_hmacsha512256_final(&state, mac.data());  // final wipes the state copy
  return mac;
}

bool prepared_hmac::verify(std::span<const std::uint8_t, hmac_bytes> mac,
                           std::initializer_list<std::span<const std::uint8_t>> parts) const {
  const std::array<std::uint8_t, hmac_bytes> expected = sign(parts);
  return crypto_verify_32(mac.data(), expected.data()) == 0;
}

}  // namespace kvsim::core
