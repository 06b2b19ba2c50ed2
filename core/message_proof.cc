#include "core/message_proof.h"

#include <sodium.h>

#include <string_view>

#include "core/invariant.h"

namespace kvsim::core {
namespace {

// Versioned, and not the abort token's tag: a token's MAC never passes for a message's proof.
constexpr std::string_view proof_domain = "kvsim-control-proof-v1";

// kind, from, to, room, generation, status (present, value), token (present, its fields as
// token_fields lays them out, MAC), page count; the pages follow in host order (a cluster runs
// one architecture; the wire format fixes its own order).
constexpr std::size_t header_bytes =
    1 + 4 + 4 + 8 + 4 + 2 + 1 + token_fields_bytes + abort_mac_bytes + 8;
using proof_header = std::array<std::uint8_t, header_bytes>;

proof_header header_of(const control_message& m, rank_id to) {
  static_assert(sizeof(m.from) == 4 && sizeof(m.key.room) == 8 && sizeof(m.key.generation) == 4);
  proof_header out{};
  std::size_t at = 0;
  at = put_le(out, at, static_cast<std::uint8_t>(m.kind));
  at = put_le(out, at, m.from);
  at = put_le(out, at, to);
  at = put_le(out, at, m.key.room);
  at = put_le(out, at, m.key.generation);
  at = put_le(out, at, static_cast<std::uint8_t>(m.status.has_value()));
  at = put_le(out, at, static_cast<std::uint8_t>(m.status ? static_cast<std::uint8_t>(*m.status) : 0));
  const abort_token token = m.token.value_or(abort_token{});
  at = put_le(out, at, static_cast<std::uint8_t>(m.token.has_value()));
  for (std::uint8_t byte : token_fields(token)) at = put_le(out, at, byte);
  for (std::uint8_t byte : token.mac) at = put_le(out, at, byte);
  at = put_le(out, at, static_cast<std::uint64_t>(m.pages.size()));
  KVSIM_INVARIANT(at == out.size(), "the proof's layout covers every field of the message");
  return out;
}

}  // namespace

message_mac::message_mac(const cluster_key& link_key) : hmac_(link_key.bytes, proof_domain) {}

message_proof message_mac::sign(const control_message& message, rank_id to) const {
  const proof_header header = header_of(message, to);
  const auto pages = std::as_bytes(std::span(message.pages));
  return hmac_.sign({header, {reinterpret_cast<const std::uint8_t*>(pages.data()), pages.size()}});
}

bool message_mac::verify(const control_message& message, rank_id to) const {
  if (!message.proof) return false;
  const proof_header header = header_of(message, to);
  const auto pages = std::as_bytes(std::span(message.pages));
  return hmac_.verify(*message.proof,
                      {header, {reinterpret_cast<const std::uint8_t*>(pages.data()), pages.size()}});
}

}  // namespace kvsim::core
