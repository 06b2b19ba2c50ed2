#pragma once
// The handshake that opens every control-plane link (tcp_messenger.h, id_exchange.h): both
// ends prove that they hold the run's key (run_secret.h) without sending it, the rank each
// end names is bound to that proof, and each direction of the link gets a session key of its
// own for sealing the frames that follow (frame_seal.h). Three frames, in the clear:
//
//   connector -> acceptor   hello:     its rank, a fresh 32-byte nonce
//   acceptor  -> connector  challenge: its rank, a fresh 32-byte nonce,
//                                      HMAC(link key, "acceptor" | transcript)
//   connector -> acceptor   proof:     HMAC(link key, "connector" | transcript)
//
// where the transcript is both ranks and both nonces (crypto_auth, HMAC-SHA-512-256; the
// role tags keep one end's MAC from being reflected as the other's). Session keys:
// BLAKE2b(keyed by the link key, "session" | transcript), 64 bytes cut into the
// connector-to-acceptor and acceptor-to-connector keys. Fresh nonces on both ends make the
// keys differ per link, so a recorded handshake replayed later proves nothing and a frame of
// one link means nothing on another.
//
// What it does not do: every holder of the run's key is trusted to name its own rank (the
// key is per run, not per rank). A rank that lies about itself is a rank the launcher gave
// the key to.
#include <chrono>

#include "core/ids.h"
#include "real_backend/wire/frame_seal.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_link.h"

namespace kvsim::real {

// This end's keys for one link; wiped when destroyed.
struct link_session {
  session_key send{};
  session_key receive{};

  link_session() = default;
  link_session(const link_session&) = default;
  link_session& operator=(const link_session&) = default;
  ~link_session();
};

// The connecting end: says it is `self`, requires the acceptor to be `expected_peer` and to
// prove the key. Throws control_plane_error (one line) when it is not; the caller closes.
link_session authenticate_connector(tcp_link& link, const link_key& key, core::rank_id self,
                                    core::rank_id expected_peer, std::chrono::milliseconds timeout);

struct accepted_link {
  core::rank_id peer = 0;  // the rank the connector named, proved with the key
  link_session keys;
};

// The accepting end (`self`): the connector's rank once it has proved the key. Throws
// control_plane_error (one line) when it has not, or names `self`.
accepted_link authenticate_acceptor(tcp_link& link, const link_key& key, core::rank_id self,
                                    std::chrono::milliseconds timeout);

}  // namespace kvsim::real
