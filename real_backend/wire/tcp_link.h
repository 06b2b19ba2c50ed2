#pragma once
// One TCP connection carrying control-plane frames (control_frame.h), over Boost.Asio. This
// header keeps Asio out of its includers: only tcp_link.cc compiles it.
//
// Connecting, accepting and the first frame of a link (the hello) have deadlines (Asio
// asynchronous operations run with io_context::run_for). Afterwards one reader thread per
// link blocks in read() while other threads write(): each is a plain blocking send or
// receive on the socket; shutdown() unblocks the reader.
//
// A link starts in the clear (the handshake of link_auth.h); once seal() gave it its session
// keys, write() seals every frame and read()/read_for() open it (frame_seal.h), so a frame
// that fails authentication is a control_plane_error like a malformed one.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/wire/frame_seal.h"

namespace kvsim::real {

struct received_frame {
  frame_type type = frame_type::hello;
  std::vector<std::uint8_t> payload;
};

class tcp_link {
 public:
  // Connects to address:port, retrying while nobody listens there yet, until `timeout`;
  // `whom` ("rank 1") names what it waited for in the line of a timeout.
  static std::unique_ptr<tcp_link> connect(const std::string& address, std::uint16_t port,
                                           std::chrono::milliseconds timeout,
                                           const std::string& whom = "a kvsim peer");
  ~tcp_link();
  tcp_link(const tcp_link&) = delete;
  tcp_link& operator=(const tcp_link&) = delete;

  void write(std::span<const std::uint8_t> frame);  // a whole encoded frame; one writer at a time
  // The next frame; empty when the peer closed the connection between frames. A connection
  // reset between frames throws peer_gone; a malformed header, a frame cut short or another
  // broken connection throw control_plane_error.
  std::optional<received_frame> read();
  // The next frame within `timeout` (the hello stage, before a reader thread exists); the
  // peer closing or resetting the connection before it throws peer_gone.
  received_frame read_for(std::chrono::milliseconds timeout);
  // From now on every frame is sealed with `send` and opened with `receive`.
  void seal(const session_key& send, const session_key& receive);
  void shutdown() noexcept;         // unblocks a read() in another thread; the peer sees the close
  const std::string& peer() const;  // "127.0.0.1:40000"

 private:
  friend class tcp_listener;
  struct impl;
  explicit tcp_link(std::unique_ptr<impl> parts);
  std::unique_ptr<impl> impl_;
};

// No connection came within an accept's timeout.
class listener_timeout : public control_plane_error {
 public:
  using control_plane_error::control_plane_error;
};

class tcp_listener {
 public:
  // Binds address:port (port 0: any free port) and listens.
  tcp_listener(const std::string& address, std::uint16_t port);
  ~tcp_listener();
  tcp_listener(const tcp_listener&) = delete;
  tcp_listener& operator=(const tcp_listener&) = delete;

  std::uint16_t port() const;
  // The next connection; listener_timeout when none came within `timeout`.
  std::unique_ptr<tcp_link> accept(std::chrono::milliseconds timeout);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace kvsim::real
