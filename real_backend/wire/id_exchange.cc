#include "real_backend/wire/id_exchange.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/peer_acceptor.h"

namespace kvsim::real {
namespace {

std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now()));
}

}  // namespace

id_server::id_server(const std::string& address, std::uint16_t port, const link_key& key)
    : listener_(address, port), key_(key) {}

void id_server::serve(const id_blob& id, std::size_t peers, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A connection that fails the handshake is logged and the next one accepted, as on every
  // listening port of a run (peer_acceptor.h).
  peer_acceptor acceptor(listener_, key_, 0, [](const std::string& line) {
    std::cerr << "kvsim real: " << line << "\n";
  });
  std::set<core::rank_id> served;
  while (served.size() < peers) {
    authenticated_link peer =
        acceptor.next(deadline, timeout,
                      std::to_string(peers) + " rank(s) to fetch the NCCL id, " +
                          std::to_string(served.size()) + " of them served");
    if (!served.insert(peer.accepted.peer).second) {
      throw control_plane_error("control plane: " + peer.link->peer() + " claims rank " +
                                std::to_string(peer.accepted.peer) + ", which already has the id");
    }
    peer.link->seal(peer.accepted.keys.send, peer.accepted.keys.receive);
    peer.link->write(encode_id(id));
  }
}

id_blob fetch_id(const std::string& address, std::uint16_t port, core::rank_id rank,
                 const link_key& key, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_ptr<tcp_link> link = tcp_link::connect(address, port, timeout, "rank 0");
  const link_session session = authenticate_connector(*link, key, rank, 0, left_until(deadline));
  link->seal(session.send, session.receive);
  const received_frame frame = link->read_for(left_until(deadline));
  if (frame.type != frame_type::nccl_id) {
    throw control_plane_error("control plane: rank 0 at " + link->peer() + " answered with a " +
                              to_string(frame.type) + " frame instead of the NCCL id");
  }
  return decode_id(frame.payload);
}

}  // namespace kvsim::real
