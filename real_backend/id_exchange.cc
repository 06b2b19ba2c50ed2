#include "real_backend/id_exchange.h"

#include <algorithm>
#include <set>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now()));
}

}  // namespace

id_server::id_server(const std::string& address, std::uint16_t port) : listener_(address, port) {}

void id_server::serve(const id_blob& id, std::size_t peers, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<core::rank_id> served;
  while (served.size() < peers) {
    std::unique_ptr<tcp_link> link = listener_.accept(left_until(deadline));
    const received_frame hello = link->read_for(left_until(deadline));
    if (hello.type != frame_type::hello) {
      throw control_plane_error("control plane: " + link->peer() + " sent a " +
                                to_string(hello.type) + " frame instead of its hello");
    }
    const core::rank_id rank = decode_hello(hello.payload);
    if (rank == 0 || !served.insert(rank).second) {
      throw control_plane_error("control plane: " + link->peer() + " claims rank " +
                                std::to_string(rank) + ", which " +
                                (rank == 0 ? "is rank 0's own" : "already has the id"));
    }
    link->write(encode_id(id));
  }
}

id_blob fetch_id(const std::string& address, std::uint16_t port, core::rank_id rank,
                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_ptr<tcp_link> link = tcp_link::connect(address, port, timeout);
  link->write(encode_hello(rank));
  const received_frame frame = link->read_for(left_until(deadline));
  if (frame.type != frame_type::nccl_id) {
    throw control_plane_error("control plane: rank 0 at " + link->peer() + " answered with a " +
                              to_string(frame.type) + " frame instead of the NCCL id");
  }
  return decode_id(frame.payload);
}

}  // namespace kvsim::real
