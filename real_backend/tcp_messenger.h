#pragma once
// core::messenger over TCP: the control plane between prefill and decode processes (ABORT,
// ABORT_ACK, metadata, status, chunk-ready). A rank listens for the peers that connect to it
// and connects to the others; every link starts with a hello naming the connecting rank.
// One reader thread per link decodes frames into one inbox; receive() takes from it in
// arrival order. A malformed frame from a peer is not skipped: receive() throws it.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/ports.h"
#include "real_backend/tcp_link.h"

namespace kvsim::real {

class tcp_messenger final : public core::messenger {
 public:
  explicit tcp_messenger(core::rank_id self);
  ~tcp_messenger() override;
  tcp_messenger(const tcp_messenger&) = delete;
  tcp_messenger& operator=(const tcp_messenger&) = delete;

  // Listens on address:port (port 0: any free port) and returns the port.
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  // Accepts `peers` connections (after listen), each naming its rank in its hello.
  void accept_peers(std::size_t peers, std::chrono::milliseconds timeout);
  // Connects to `peer` at address:port and says who this rank is.
  void connect(core::rank_id peer, const std::string& address, std::uint16_t port,
               std::chrono::milliseconds timeout);

  void send(core::rank_id to, const core::control_message& message) override;
  // Blocks until a message arrives; throws control_plane_error on a malformed frame or when
  // every link has closed with nothing left to read.
  core::control_message receive() override;
  std::optional<core::control_message> receive_for(std::chrono::milliseconds timeout);
  std::optional<core::control_message> try_receive() {
    return receive_for(std::chrono::milliseconds(0));
  }

  core::rank_id self() const { return self_; }
  // Raw bytes to a peer, as they are (tests of the receiving side's refusals).
  void send_raw(core::rank_id to, std::span<const std::uint8_t> bytes);

 private:
  struct link_entry {
    std::unique_ptr<tcp_link> link;
    std::mutex write_mutex;
    std::thread reader;
  };
  using inbox_item = std::variant<core::control_message, std::string>;  // message or error line

  void add_link(core::rank_id peer, std::unique_ptr<tcp_link> link);
  void read_loop(core::rank_id peer, tcp_link& link);
  void push(inbox_item item);
  link_entry& link_to(core::rank_id peer);

  core::rank_id self_;
  std::unique_ptr<tcp_listener> listener_;
  std::map<core::rank_id, std::unique_ptr<link_entry>> links_;
  std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::deque<inbox_item> inbox_;
  std::size_t links_closed_ = 0;
};

}  // namespace kvsim::real
