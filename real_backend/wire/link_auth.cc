#include "real_backend/wire/link_auth.h"

#include <sodium.h>

#include <algorithm>
#include <string>
#include <vector>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

static_assert(handshake_mac_bytes == crypto_auth_hmacsha512256_BYTES);
static_assert(secret_bytes == crypto_auth_hmacsha512256_KEYBYTES);

constexpr char domain[] = "kvsim link v3";

// Both ranks and both nonces, in a fixed order, after the domain tag.
std::vector<std::uint8_t> transcript(const hello_fields& hello, core::rank_id acceptor,
                                     const handshake_nonce& acceptor_nonce) {
  std::vector<std::uint8_t> t(domain, domain + sizeof domain);
  const auto put_rank = [&t](core::rank_id rank) {
    for (std::size_t i = 0; i < 4; ++i) t.push_back(static_cast<std::uint8_t>(rank >> (8 * i)));
  };
  put_rank(hello.rank);
  t.insert(t.end(), hello.nonce.begin(), hello.nonce.end());
  put_rank(acceptor);
  t.insert(t.end(), acceptor_nonce.begin(), acceptor_nonce.end());
  return t;
}

handshake_mac role_mac(const link_key& key, const char* role, const std::vector<std::uint8_t>& t) {
  crypto_auth_hmacsha512256_state state;
  crypto_auth_hmacsha512256_init(&state, key.bytes.data(), key.bytes.size());
  crypto_auth_hmacsha512256_update(&state, reinterpret_cast<const unsigned char*>(role),
                                   std::char_traits<char>::length(role) + 1);
  crypto_auth_hmacsha512256_update(&state, t.data(), t.size());
  handshake_mac mac{};
  crypto_auth_hmacsha512256_final(&state, mac.data());
  sodium_memzero(&state, sizeof state);
  return mac;
}

bool same_mac(const handshake_mac& a, const handshake_mac& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;  // constant time
}

// Connector-to-acceptor key first, then acceptor-to-connector.
std::array<std::uint8_t, 2 * session_key_bytes> session_keys(const link_key& key,
                                                             const std::vector<std::uint8_t>& t) {
  static_assert(2 * session_key_bytes <= crypto_generichash_BYTES_MAX);
  std::vector<std::uint8_t> input = {'s', 'e', 's', 's', 'i', 'o', 'n', 0};
  input.insert(input.end(), t.begin(), t.end());
  std::array<std::uint8_t, 2 * session_key_bytes> out{};
  crypto_generichash(out.data(), out.size(), input.data(), input.size(), key.bytes.data(),
                     key.bytes.size());
  return out;
}

handshake_nonce fresh_nonce() {
  handshake_nonce nonce{};
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

[[noreturn]] void refuse(const tcp_link& link, const std::string& why) {
  throw control_plane_error("control plane: " + link.peer() +
                            " failed authentication at the hello: " + why + "; link closed");
}

// The next handshake frame, which must be of `type`; a read that fails is a refusal too.
received_frame expect(tcp_link& link, frame_type type, std::chrono::milliseconds timeout) {
  received_frame frame;
  try {
    frame = link.read_for(timeout);
  } catch (const peer_gone&) {
    // Not a refusal of this end's proof: the other end went away (died, or was never a
    // kvsim rank), which the caller names as such.
    // A connector that finds this end's proof wrong closes before its own: most likely a
    // rank of another run (another key).
    throw peer_gone(
        "control plane: " + link.peer() + " closed the connection during the " +
        "handshake, before its " + to_string(type) +
        (type == frame_type::proof ? " (it has another run's key, or it died)" : " (died?)"));
  } catch (const control_plane_error& e) {
    refuse(link, std::string("no ") + to_string(type) + " (" + e.what() + ")");
  }
  if (frame.type != type) {
    refuse(link, std::string("a ") + to_string(frame.type) + " frame where its " + to_string(type) +
                     " belongs");
  }
  return frame;
}

template <class Decode>
auto decoded(const tcp_link& link, Decode decode) {
  try {
    return decode();
  } catch (const control_plane_error& e) {
    refuse(link, e.what());
  }
}

}  // namespace

link_session::~link_session() {
  sodium_memzero(send.data(), send.size());
  sodium_memzero(receive.data(), receive.size());
}

link_session authenticate_connector(tcp_link& link, const link_key& key, core::rank_id self,
                                    core::rank_id expected_peer,
                                    std::chrono::milliseconds timeout) {
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
  const hello_fields hello{self, fresh_nonce()};
  link.write(encode_hello(hello));
  const received_frame frame = expect(link, frame_type::challenge, timeout);
  const challenge_fields challenge = decoded(link, [&] { return decode_challenge(frame.payload); });
  if (challenge.rank != expected_peer) {
    refuse(link, "it says it is rank " + std::to_string(challenge.rank) + ", not rank " +
                     std::to_string(expected_peer));
  }
  const std::vector<std::uint8_t> t = transcript(hello, challenge.rank, challenge.nonce);
  if (!same_mac(challenge.mac, role_mac(key, "acceptor", t))) {
    refuse(link, "rank " + std::to_string(challenge.rank) + " did not prove the run's key");
  }
  link.write(encode_proof(role_mac(key, "connector", t)));
  auto keys = session_keys(key, t);
  link_session session;
  std::copy(keys.begin(), keys.begin() + session_key_bytes, session.send.begin());
  std::copy(keys.begin() + session_key_bytes, keys.end(), session.receive.begin());
  sodium_memzero(keys.data(), keys.size());
  return session;
}

accepted_link authenticate_acceptor(tcp_link& link, const link_key& key, core::rank_id self,
                                    std::chrono::milliseconds timeout) {
  if (sodium_init() < 0) throw real_backend_error("libsodium could not be initialised");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const received_frame first = expect(link, frame_type::hello, timeout);
  const hello_fields hello = decoded(link, [&] { return decode_hello(first.payload); });
  if (hello.rank == self) {
    refuse(link, "it claims rank " + std::to_string(self) + ", this rank's own");
  }
  const handshake_nonce nonce = fresh_nonce();
  const std::vector<std::uint8_t> t = transcript(hello, self, nonce);
  link.write(encode_challenge({self, nonce, role_mac(key, "acceptor", t)}));
  const auto left =
      std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 deadline - std::chrono::steady_clock::now()));
  const received_frame last = expect(link, frame_type::proof, left);
  const handshake_mac proof = decoded(link, [&] { return decode_proof(last.payload); });
  if (!same_mac(proof, role_mac(key, "connector", t))) {
    refuse(link, "the peer that says it is rank " + std::to_string(hello.rank) +
                     " did not prove the run's key");
  }
  auto keys = session_keys(key, t);
  accepted_link accepted;
  accepted.peer = hello.rank;
  std::copy(keys.begin(), keys.begin() + session_key_bytes, accepted.keys.receive.begin());
  std::copy(keys.begin() + session_key_bytes, keys.end(), accepted.keys.send.begin());
  sodium_memzero(keys.data(), keys.size());
  return accepted;
}

}  // namespace kvsim::real
