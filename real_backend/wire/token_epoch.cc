#include "real_backend/wire/token_epoch.h"

#include <sodium.h>

#include "real_backend/errors.h"

namespace kvsim::real {

std::uint64_t draw_token_epoch() {
  // Idempotent and thread-safe: an issuer may start on any rank's thread.
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
  std::uint64_t epoch = 0;
  while (epoch == 0) randombytes_buf(&epoch, sizeof epoch);  // zero is refused by the core
  return epoch;
}

core::cluster_key draw_cluster_key() {
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
  core::cluster_key key;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return key;
}

}  // namespace kvsim::real
