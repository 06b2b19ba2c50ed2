#pragma once
// core::messenger over TCP: the control plane between prefill and decode processes (ABORT,
// ABORT_ACK, metadata, status, chunk-ready). A rank listens for the peers that connect to it
// and connects to the others. Every link starts with the handshake of link_auth.h: both ends
// prove the run's key, and the rank the connector names is the link's peer from then on;
// every frame after it is sealed (frame_seal.h). One reader thread per link decodes frames
// into one inbox; receive() takes from it in arrival order.
//
// Refused, logged as one line, and never delivered: a connection whose handshake fails
// (accepting: counted, closed, and the next connection accepted, peer_acceptor.h;
// connecting: the call throws that line), a frame that fails authentication or is
// malformed, and a frame whose `from` is not the link's authenticated peer. The last two
// close the link as hostile: nothing more is read from it, and receive() throws the line
// (the rank learns that a peer attacked or broke, instead of the message being skipped).
//
// A peer whose authenticated link closes or is reset between frames is not refused: after
// the messages it sent, receive() throws peer_gone, "peer rank R (ADDR) closed its link to
// rank S (died?)", at once (the kernel closes a dead process's sockets).
//
// Step frames (control_frame.h; ranks started by torchrun or srun, launched_run.h) travel on
// the same links, sealed the same way, into an inbox of their own: accepted only from the one
// rank named by accept_steps_from(), and refused as hostile from any other (or when none was
// named), like a frame claiming another rank's `from`.
//
// Collective frames (the members of a rank group in processes of their own, wire_group.h) go
// into a third inbox, with the link's authenticated rank as their sender: taken only by a
// messenger that accept_collectives(), and refused as hostile by any other.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "core/ports.h"
#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/wire/peer_acceptor.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_link.h"

namespace kvsim::real {

// A collective note and who sent it; no note: that peer's link has closed (after its last note).
struct collective_delivery {
  core::rank_id from = 0;
  std::optional<collective_note> note;
};

class tcp_messenger final : public core::messenger {
 public:
  // Where refusals go, one line each; by default standard error, as "kvsim real: LINE".
  using refusal_log = std::function<void(const std::string& line)>;

  // `key`: the run's link key (run_secret.h), the same on every rank of the run.
  tcp_messenger(core::rank_id self, const link_key& key);
  ~tcp_messenger() override;
  tcp_messenger(const tcp_messenger&) = delete;
  tcp_messenger& operator=(const tcp_messenger&) = delete;

  // Listens on address:port (port 0: any free port) and returns the port.
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  // Accepts connections (after listen) until `peers` of them have named their rank in the
  // hello and proved the run's key, or `timeout` has passed (peer_acceptor.h). A connection
  // that fails the handshake, or has not completed it within `handshake`, is logged, counted
  // (refused_connections()) and closed, and the next one accepted: a stranger at the port
  // ends nothing. Throws link_refused ("handshake failed", with the count of refused
  // connections) or control_plane_error ("timed out") when the peers have not all come.
  void accept_peers(std::size_t peers, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds handshake = handshake_deadline);
  // Connections refused by accept_peers so far.
  std::size_t refused_connections() const;
  // Connects to `peer` at address:port, says who this rank is and requires the listener to
  // be `peer` and to prove the run's key (else logged, closed and thrown).
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

  // Step frames are taken from `peer` only (before any link).
  void accept_steps_from(core::rank_id peer) { steps_from_ = peer; }
  // One step line to `to`, as a sealed step frame.
  void send_step(core::rank_id to, std::string_view line);
  // The next step line from the rank named by accept_steps_from(); empty when none came
  // within `timeout`. Throws control_plane_error with the refusal's line when its link was
  // refused, and when it has closed with nothing left to read.
  std::optional<std::string> receive_step_for(std::chrono::milliseconds timeout);

  // Collective frames are taken from every peer (before any link).
  void accept_collectives() { collectives_ = true; }
  void send_collective(core::rank_id to, const collective_note& note);
  // The next collective note, or a peer's link closing; empty when none came within
  // `timeout`. Throws control_plane_error with the refusal's line when a link was refused.
  std::optional<collective_delivery> receive_collective_for(std::chrono::milliseconds timeout);

  core::rank_id self() const { return self_; }
  void set_refusal_log(refusal_log log) { log_ = std::move(log); }  // before any link
  // Bytes to a peer as one frame, sealed like any other (tests of the receiving side's
  // refusals: the frame need not be well formed).
  void send_raw(core::rank_id to, std::span<const std::uint8_t> bytes);

 private:
  struct link_entry {
    std::unique_ptr<tcp_link> link;
    std::mutex write_mutex;
    std::thread reader;
  };
  // A message, a refusal's line, or the line of a peer's link closing.
  using inbox_item = std::variant<core::control_message, std::string, peer_gone>;

  void add_link(core::rank_id peer, std::unique_ptr<tcp_link> link);
  void read_loop(core::rank_id peer, tcp_link& link);
  void push(inbox_item item);
  void push_step(std::string line);
  void push_step_refusal(const std::string& line);
  void push_collective(std::variant<collective_delivery, control_plane_error> item);
  [[noreturn]] void refuse_link(const std::string& line);
  link_entry& link_to(core::rank_id peer);

  core::rank_id self_;
  link_key key_;
  refusal_log log_;
  std::unique_ptr<tcp_listener> listener_;
  std::map<core::rank_id, std::unique_ptr<link_entry>> links_;
  mutable std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::deque<inbox_item> inbox_;
  std::size_t links_closed_ = 0;
  std::size_t refused_connections_ = 0;
  std::optional<core::rank_id> steps_from_;
  std::deque<std::variant<std::string, control_plane_error>> step_inbox_;  // line or refusal
  bool step_link_closed_ = false;
  bool collectives_ = false;
  std::deque<std::variant<collective_delivery, control_plane_error>> collective_inbox_;
};

}  // namespace kvsim::real
