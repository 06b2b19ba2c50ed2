#pragma once
// Proofs on control messages. A prefill rank's drain-ACK, chunk_ready and status tell decode
// that it may free pages (or that a request failed), so each carries a MAC its sender makes
// under the key of its link to the receiver (core/link_keys.h), over everything the message
// says: kind, sender, receiver, (room, generation), status, the echoed token whole and the
// pages. A rank that holds no key of that link (a stranger, a peer of other links, a process
// that only saw the ABORT go by) cannot make one; `from` is then bound by cryptography, not by
// what a sender claims. Decode's ABORT carries the issuer's token, which is its own proof.
#include <array>
#include <cstdint>

#include "core/ids.h"
#include "core/ports.h"
#include "core/prepared_hmac.h"
#include "core/token_mac.h"

namespace kvsim::core {

using message_proof = std::array<std::uint8_t, hmac_bytes>;

class message_mac {
 public:
  explicit message_mac(const cluster_key& link_key);

  // The proof of `message` (its `proof` field excluded) sent to rank `to`.
  message_proof sign(const control_message& message, rank_id to) const;
  // True when `message.proof` is this key's proof of it as received by rank `to`; constant time.
  bool verify(const control_message& message, rank_id to) const;

 private:
  prepared_hmac hmac_;
};

}  // namespace kvsim::core
