#pragma once
// The control plane's wire format between prefill and decode processes (and the NCCL id
// exchange): length-prefixed frames, every integer little-endian, nothing implicit.
//
//   frame     = payload_length u32 | type u8 | payload
//   hello     = magic u32 "kvsm" | version u16 | rank u32 | nonce 32 bytes
//                                                  (first frame on a link, from the connector)
//   challenge = rank u32 | nonce 32 bytes | mac 32 bytes     (the acceptor's answer)
//   proof     = mac 32 bytes                                  (the connector's last word)
//   control   = kind u8 | from u32 | room u64 | generation u32
//               | has_token u8 [ room u64 | generation u32 | issuer u32 | audience u32
//                                | epoch u64 | nonce u64 | mac 32 bytes ]
//               | page_count u32 | page u32 * page_count
//               | has_status u8 [ status u8 ] | has_proof u8 [ proof 32 bytes ]
//   nccl_id   = 128 opaque bytes (ncclUniqueId)
//   step      = line_length u32 | line (line_length bytes, 1..step_line_max, no control
//               character): one line of the step protocol (step_channel.h) between ranks
//               started by torchrun or srun (launched_run.h), rank 0 driving rank 1
//   collective = group u32 | say u8 | sequence u64 | kind u8 | value i64 | line_length u32
//               | line: one member of a rank group to another (wire_group.h), the sender being
//               the link's authenticated rank. say 1 entered: collective `sequence` (1..), of
//               `kind` (collective_kind.h), with `value`, no line; 2 finished: the member
//               returned after `sequence` collectives (0..), the last of `kind` (0 when none),
//               value 0, no line; 3 diverged: the I5 finding it reported waiting in `sequence`
//               of `kind`, value 0, line 1..collective_line_max bytes starting "I5: ", no
//               control character
//
// Hello, challenge and proof are the handshake that authenticates a link (link_auth.h); they
// travel in the clear. Every frame after it is sealed (frame_seal.h): the header as above,
// with payload_length counting the sealed payload (ciphertext and its 16-byte tag).
//
// Decoding trusts nothing: an unknown type or kind, a length over the limit, a truncated
// field, an out-of-range enum or trailing bytes are refused with one control_plane_error line
// that names the field and the offset.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ports.h"
#include "real_backend/nccl/collective_kind.h"

namespace kvsim::real {

enum class frame_type : std::uint8_t {
  hello = 1,
  control = 2,
  nccl_id = 3,
  challenge = 4,
  proof = 5,
  step = 6,
  collective = 7
};

inline constexpr std::size_t frame_header_bytes = 5;
inline constexpr std::uint32_t frame_payload_max = 1u << 20;  // 1 MiB: far above any message
inline constexpr std::uint32_t hello_magic = 0x6d73766b;      // "kvsm" read little-endian
// 2: tokens carry their audience and the issuer's epoch (core/abort_token.h).
// 3: links are authenticated at the hello and sealed afterwards (link_auth.h, frame_seal.h).
// 4: step frames (rank 0 hands rank 1 the script's steps when a launcher started them).
// 5: collective frames (the members of a rank group in processes of their own).
// 6: control messages carry their sender's proof under the link's key (core/message_proof.h),
//    and abort tokens are MACed under the key of their link, not the cluster's.
inline constexpr std::uint16_t wire_version = 6;
inline constexpr std::size_t id_blob_bytes = 128;  // NCCL_UNIQUE_ID_BYTES
using id_blob = std::array<std::uint8_t, id_blob_bytes>;
inline constexpr std::size_t handshake_nonce_bytes = 32;
inline constexpr std::size_t handshake_mac_bytes = 32;  // crypto_auth (HMAC-SHA-512-256)
using handshake_nonce = std::array<std::uint8_t, handshake_nonce_bytes>;
using handshake_mac = std::array<std::uint8_t, handshake_mac_bytes>;
// A step line's bound: far above any step, answer or rank's findings (an events answer of a
// long --trace run may not fit, and is refused rather than cut), and within a sealed frame.
inline constexpr std::uint32_t step_line_max = 512u * 1024u;

// A diverged note's finding: one I5 line, far above any the books write.
inline constexpr std::uint32_t collective_line_max = 4096;

enum class collective_say : std::uint8_t { entered = 1, finished = 2, diverged = 3 };
const char* to_string(collective_say say);

struct collective_note {
  std::uint32_t group = 0;
  collective_say say = collective_say::entered;
  std::uint64_t sequence = 0;
  collective_kind kind = collective_kind::barrier;
  std::int64_t value = 0;
  std::string line;  // diverged only
  friend bool operator==(const collective_note&, const collective_note&) = default;
};

struct hello_fields {
  core::rank_id rank = 0;  // the connecting rank, as it claims (proved by the handshake)
  handshake_nonce nonce{};
};
struct challenge_fields {
  core::rank_id rank = 0;  // the accepting rank
  handshake_nonce nonce{};
  handshake_mac mac{};
};

struct frame_header {
  frame_type type = frame_type::hello;
  std::uint32_t payload_bytes = 0;
};

// Whole frames (header and payload), ready to write.
std::vector<std::uint8_t> encode_hello(const hello_fields& hello);
std::vector<std::uint8_t> encode_challenge(const challenge_fields& challenge);
std::vector<std::uint8_t> encode_proof(const handshake_mac& mac);
std::vector<std::uint8_t> encode_control(const core::control_message& message);
std::vector<std::uint8_t> encode_id(const id_blob& id);
// Throws control_plane_error for a line the decoder would refuse (empty, too long, a control
// character): nothing malformed is ever sent.
std::vector<std::uint8_t> encode_step(std::string_view line);
// Likewise for a note the decoder would refuse.
std::vector<std::uint8_t> encode_collective(const collective_note& note);

frame_header decode_header(std::span<const std::uint8_t> header);  // exactly 5 bytes
hello_fields decode_hello(std::span<const std::uint8_t> payload);
challenge_fields decode_challenge(std::span<const std::uint8_t> payload);
handshake_mac decode_proof(std::span<const std::uint8_t> payload);
core::control_message decode_control(std::span<const std::uint8_t> payload);
id_blob decode_id(std::span<const std::uint8_t> payload);
std::string decode_step(std::span<const std::uint8_t> payload);
collective_note decode_collective(std::span<const std::uint8_t> payload);

const char* to_string(frame_type type);
const char* to_string(core::control_kind kind);  // "ABORT_ACK", as error lines name it

}  // namespace kvsim::real
