#include "real_backend/wire/frame_seal.h"

#include <sodium.h>

#include <limits>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

using nonce_bytes = std::array<std::uint8_t, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES>;

static_assert(session_key_bytes == crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
static_assert(seal_tag_bytes == crypto_aead_xchacha20poly1305_ietf_ABYTES);

nonce_bytes counter_nonce(std::uint64_t count) {
  nonce_bytes nonce{};
  for (std::size_t i = 0; i < sizeof count; ++i) {
    nonce[i] = static_cast<std::uint8_t>(count >> (8 * i));
  }
  return nonce;
}

void put_length(std::span<std::uint8_t> header, std::size_t payload_bytes) {
  for (std::size_t i = 0; i < 4; ++i) {
    header[i] = static_cast<std::uint8_t>(payload_bytes >> (8 * i));
  }
}

}  // namespace

frame_seal::frame_seal(const session_key& key) : key_(key) {
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
}

frame_seal::~frame_seal() { sodium_memzero(key_.data(), key_.size()); }

std::vector<std::uint8_t> frame_seal::seal(std::span<const std::uint8_t> frame) {
  if (frame.size() < frame_header_bytes) {
    throw control_plane_error("control plane: a frame to seal is shorter than its header");
  }
  const std::span<const std::uint8_t> plain = frame.subspan(frame_header_bytes);
  if (plain.size() > sealed_plaintext_max) {
    throw control_plane_error(
        "control plane: a " + std::string(to_string(static_cast<frame_type>(frame[4]))) +
        " frame of " + std::to_string(plain.size()) +
        " payload bytes exceeds the sealed limit of " + std::to_string(sealed_plaintext_max));
  }
  if (frames_ == std::numeric_limits<std::uint64_t>::max()) {
    throw control_plane_error("control plane: a link sealed 2^64 frames; its nonces are spent");
  }
  std::vector<std::uint8_t> out(frame_header_bytes + plain.size() + seal_tag_bytes);
  out[4] = frame[4];
  put_length(out, plain.size() + seal_tag_bytes);
  const nonce_bytes nonce = counter_nonce(frames_);
  unsigned long long written = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      out.data() + frame_header_bytes, &written, plain.data(), plain.size(), out.data(),
      frame_header_bytes, nullptr, nonce.data(), key_.data());
  ++frames_;
  return out;
}

std::vector<std::uint8_t> frame_seal::open(std::span<const std::uint8_t> header,
                                           std::span<const std::uint8_t> sealed,
                                           const std::string& peer) {
  if (sealed.size() < seal_tag_bytes) {
    throw control_plane_error("control plane: a sealed frame from " + peer + " has " +
                              std::to_string(sealed.size()) + " byte(s), less than its " +
                              std::to_string(seal_tag_bytes) + "-byte tag: refused");
  }
  std::vector<std::uint8_t> plain(sealed.size() - seal_tag_bytes);
  const nonce_bytes nonce = counter_nonce(frames_);
  unsigned long long read = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain.data(), &read, nullptr, sealed.data(),
                                                 sealed.size(), header.data(), header.size(),
                                                 nonce.data(), key_.data()) != 0) {
    throw control_plane_error("control plane: frame " + std::to_string(frames_) + " from " + peer +
                              " failed authentication (altered, replayed, reordered or sealed "
                              "under another key): refused, link closed");
  }
  ++frames_;
  return plain;
}

}  // namespace kvsim::real
