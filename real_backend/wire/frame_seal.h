#pragma once
// One direction of an authenticated link after its handshake (link_auth.h): every frame's
// payload encrypted and authenticated with XChaCha20-Poly1305 (libsodium's
// crypto_aead_xchacha20poly1305_ietf) under that direction's session key, its header
// (length and type) authenticated with it as associated data, and the nonce a counter of the
// frames sent so far. The receiver expects exactly the next count, so a frame altered in any
// byte, replayed, reordered, dropped, or sealed under another key is refused.
//
// Each direction of each link has a key of its own (the handshake derives them from fresh
// nonces), so a counter nonce never repeats under a key.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "real_backend/wire/control_frame.h"

namespace kvsim::real {

inline constexpr std::size_t session_key_bytes = 32;
inline constexpr std::size_t seal_tag_bytes = 16;
// The largest plaintext payload a sealed frame carries within frame_payload_max.
inline constexpr std::size_t sealed_plaintext_max = frame_payload_max - seal_tag_bytes;

using session_key = std::array<std::uint8_t, session_key_bytes>;

class frame_seal {
 public:
  explicit frame_seal(const session_key& key);
  ~frame_seal();  // wipes the key
  frame_seal(const frame_seal&) = delete;
  frame_seal& operator=(const frame_seal&) = delete;

  // A whole plain frame (header and payload, as control_frame.h encodes it) to the whole
  // sealed frame that goes on the wire.
  std::vector<std::uint8_t> seal(std::span<const std::uint8_t> frame);
  // The plaintext payload of the sealed frame whose header and sealed payload were read
  // (`peer` names the link in the error); throws control_plane_error when it fails.
  std::vector<std::uint8_t> open(std::span<const std::uint8_t> header,
                                 std::span<const std::uint8_t> sealed, const std::string& peer);

 private:
  session_key key_{};
  std::uint64_t frames_ = 0;  // sealed or opened so far: the next frame's nonce
};

}  // namespace kvsim::real
