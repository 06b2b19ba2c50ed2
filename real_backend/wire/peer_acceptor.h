#pragma once
// Accepting the peers of a run on a port anyone can reach. Whoever connects first is not
// necessarily a peer: a port scanner, a health check, a stranger sending garbage or a
// recorded handshake, a connection that says nothing. None of them may end the run or hold
// the port: each accepted connection gets a handshake deadline of its own (well under the
// patience for the peers), and a connection that fails the handshake (link_auth.h) in any
// way is logged as one line, counted and closed, and the next one is accepted, until the
// peers asked for have proved the run's key or the patience has run out.
//
// The handshakes are served one after another on the caller's thread (no thread of its own,
// nothing shared): a silent connection costs the peers behind it at most the handshake
// deadline. What it does not cover: a flood of connections, each held to its deadline, delays
// the real peer for as long as the flood goes on (it then times out, saying how many were
// refused); no kvsim process can stop a denial of service on its own port.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/ids.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_link.h"

namespace kvsim::real {

// How long one accepted connection may take to complete the handshake: far above a genuine
// peer's three frames on any network a run spans, far below the patience for the peers.
inline constexpr std::chrono::milliseconds handshake_deadline{3000};

struct authenticated_link {
  std::unique_ptr<tcp_link> link;
  accepted_link accepted;  // the peer's rank and the link's session keys
};

class peer_acceptor {
 public:
  using refusal_log = std::function<void(const std::string& line)>;

  // `self`: the accepting rank; `log`: where each refused connection's line goes.
  peer_acceptor(tcp_listener& listener, const link_key& key, core::rank_id self, refusal_log log,
                std::chrono::milliseconds handshake = handshake_deadline);

  // The next connection that proves the run's key, before `deadline`. When the deadline
  // passes first: link_refused when some connection was refused ("handshake failed", their
  // count and the last one's line), else control_plane_error ("timed out"); `waiting_for`
  // says for what ("1 more peer").
  authenticated_link next(std::chrono::steady_clock::time_point deadline,
                          std::chrono::milliseconds patience, const std::string& waiting_for);

  std::size_t refused() const { return refused_; }

 private:
  void refuse(const std::string& line);
  [[noreturn]] void give_up(std::chrono::milliseconds patience, const std::string& waiting_for);

  tcp_listener& listener_;
  const link_key& key_;
  core::rank_id self_;
  refusal_log log_;
  std::chrono::milliseconds handshake_;
  std::size_t refused_ = 0;
  std::string last_refusal_;
};

}  // namespace kvsim::real
