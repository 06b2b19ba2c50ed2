#pragma once
// The NCCL unique id from rank 0 to every other rank of a launch, over the control plane's
// TCP framing: rank 0 listens at MASTER_ADDR:MASTER_PORT and answers each peer's hello with
// the id (ncclGetUniqueId's 128 bytes, opaque here); the other ranks connect (retrying until
// rank 0 listens) and read it. Every wait has a deadline and fails with one line.
//
// Each link is authenticated with the run's key first (link_auth.h) and the id goes sealed
// (frame_seal.h): whoever holds the id can join the communicator, so it is handed to proven
// ranks of this run only, and never crosses the network in the clear.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/ids.h"
#include "real_backend/wire/control_frame.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_link.h"

namespace kvsim::real {

class id_server {
 public:
  // port 0: any free port (tests). `key`: the run's link key.
  id_server(const std::string& address, std::uint16_t port, const link_key& key);
  std::uint16_t port() const { return listener_.port(); }
  // Hands `id` to `peers` distinct ranks (1 .. world-1), in whatever order they come.
  void serve(const id_blob& id, std::size_t peers, std::chrono::milliseconds timeout);

 private:
  tcp_listener listener_;
  link_key key_;
};

id_blob fetch_id(const std::string& address, std::uint16_t port, core::rank_id rank,
                 const link_key& key, std::chrono::milliseconds timeout);

}  // namespace kvsim::real
