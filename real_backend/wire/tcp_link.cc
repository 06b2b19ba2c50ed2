#include "real_backend/wire/tcp_link.h"

#include <array>
#include <thread>
// Before Boost.Asio: its awaitable.hpp uses std::exchange without including <utility>, which
// breaks when this file opens a unity batch.
#include <utility>

#include <boost/asio.hpp>

#include "real_backend/errors.h"
#include "real_backend/wire/wait_text.h"

namespace kvsim::real {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string endpoint_text(const std::string& address, std::uint16_t port) {
  return address + ":" + std::to_string(port);
}

// Runs the asynchronous operation that `start` began until it completed or `timeout`
// passed; then `cancel` aborts it and its handler runs with operation_aborted.
template <class Cancel>
bool run_until_done(asio::io_context& io, const bool& done, std::chrono::milliseconds timeout,
                    Cancel cancel) {
  io.restart();
  io.run_for(timeout);
  if (done) return true;
  cancel();
  io.restart();
  io.run();
  return false;
}

}  // namespace

struct tcp_link::impl {
  asio::io_context io;
  tcp::socket socket{io};
  std::string peer;
  std::unique_ptr<frame_seal> outgoing;  // both set once the handshake is over
  std::unique_ptr<frame_seal> incoming;
};

tcp_link::tcp_link(std::unique_ptr<impl> parts) : impl_(std::move(parts)) {}

tcp_link::~tcp_link() {
  error_code ignored;
  impl_->socket.close(ignored);
}

const std::string& tcp_link::peer() const { return impl_->peer; }

std::unique_ptr<tcp_link> tcp_link::connect(const std::string& address, std::uint16_t port,
                                            std::chrono::milliseconds timeout,
                                            const std::string& whom) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto parts = std::make_unique<impl>();
  parts->peer = endpoint_text(address, port);
  error_code resolve_error;
  tcp::resolver resolver(parts->io);
  const auto endpoints = resolver.resolve(address, std::to_string(port), resolve_error);
  if (resolve_error) {
    throw control_plane_error("control plane: cannot resolve " + parts->peer + ": " +
                              resolve_error.message());
  }
  std::string last = "no attempt";
  while (std::chrono::steady_clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    bool done = false;
    error_code result;
    asio::async_connect(parts->socket, endpoints, [&](const error_code& e, const tcp::endpoint&) {
      result = e;
      done = true;
    });
    if (!run_until_done(parts->io, done, std::max(left, std::chrono::milliseconds(1)), [&] {
          error_code ignored;
          parts->socket.close(ignored);
        })) {
      last = "timed out";
      break;
    }
    if (!result) {
      parts->socket.set_option(tcp::no_delay(true));
      return std::unique_ptr<tcp_link>(new tcp_link(std::move(parts)));
    }
    last = result.message();
    error_code ignored;
    parts->socket.close(ignored);
    // Refused: the peer is not listening yet (it may start after us); try again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw control_plane_error("control plane: timed out: waited " + seconds_text(timeout) + " for " +
                            whom + " to accept a connection at " + parts->peer +
                            " (last attempt: " + last + ")");
}

void tcp_link::seal(const session_key& send, const session_key& receive) {
  impl_->outgoing = std::make_unique<frame_seal>(send);
  impl_->incoming = std::make_unique<frame_seal>(receive);
}

void tcp_link::write(std::span<const std::uint8_t> frame) {
  std::vector<std::uint8_t> sealed;
  if (impl_->outgoing) {
    sealed = impl_->outgoing->seal(frame);
    frame = sealed;
  }
  error_code ec;
  asio::write(impl_->socket, asio::buffer(frame.data(), frame.size()), ec);
  if (ec) {
    throw control_plane_error("control plane: sending to " + impl_->peer +
                              " failed: " + ec.message());
  }
}

std::optional<received_frame> tcp_link::read() {
  std::array<std::uint8_t, frame_header_bytes> header{};
  error_code ec;
  const std::size_t got = asio::read(impl_->socket, asio::buffer(header), ec);
  if (ec == asio::error::eof && got == 0) return std::nullopt;  // closed between frames
  if (ec == asio::error::connection_reset && got == 0) {
    // A process killed with data unread in its socket resets the connection instead of
    // closing it: the same death, between frames.
    throw peer_gone("control plane: the connection to " + impl_->peer + " was reset");
  }
  if (ec) {
    if (got == 0 && (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor ||
                     ec == asio::error::shut_down)) {
      return std::nullopt;  // our own shutdown()
    }
    throw control_plane_error("control plane: the connection to " + impl_->peer +
                              " broke inside a frame header (" + std::to_string(got) + " of " +
                              std::to_string(frame_header_bytes) + " bytes): " + ec.message());
  }
  const frame_header h = decode_header(header);
  received_frame frame{h.type, std::vector<std::uint8_t>(h.payload_bytes)};
  const std::size_t payload = asio::read(impl_->socket, asio::buffer(frame.payload), ec);
  if (ec) {
    throw control_plane_error("control plane: truncated " + std::string(to_string(h.type)) +
                              " frame from " + impl_->peer + ": " + std::to_string(payload) +
                              " of " + std::to_string(h.payload_bytes) +
                              " payload bytes arrived (" + ec.message() + ")");
  }
  if (impl_->incoming) frame.payload = impl_->incoming->open(header, frame.payload, impl_->peer);
  return frame;
}

received_frame tcp_link::read_for(std::chrono::milliseconds timeout) {
  std::array<std::uint8_t, frame_header_bytes> header{};
  received_frame frame;
  bool done = false;
  bool have_header = false;
  error_code result;
  std::size_t payload_bytes = 0;
  asio::async_read(impl_->socket, asio::buffer(header), [&](const error_code& e, std::size_t) {
    result = e;
    if (e) {
      done = true;
      return;
    }
    have_header = true;
    try {
      const frame_header h = decode_header(header);
      frame.type = h.type;
      frame.payload.resize(h.payload_bytes);
    } catch (const control_plane_error&) {
      done = true;  // decoded again below, outside the handler, to throw
      return;
    }
    asio::async_read(impl_->socket, asio::buffer(frame.payload),
                     [&](const error_code& e2, std::size_t n) {
                       result = e2;
                       payload_bytes = n;
                       done = true;
                     });
  });
  const bool finished = run_until_done(impl_->io, done, timeout, [&] {
    error_code ignored;
    impl_->socket.cancel(ignored);
  });
  if (!finished) {
    throw control_plane_error("control plane: no frame from " + impl_->peer + " within " +
                              std::to_string(timeout.count()) + " ms");
  }
  if (have_header && !result) (void)decode_header(header);  // throws if it was malformed
  if (!have_header && (result == asio::error::eof || result == asio::error::connection_reset)) {
    throw peer_gone("control plane: " + impl_->peer + " closed the connection (" +
                    result.message() + ")");
  }
  if (result) {
    throw control_plane_error("control plane: reading from " + impl_->peer + " failed " +
                              (have_header
                                   ? "inside a frame (" + std::to_string(payload_bytes) + " of " +
                                         std::to_string(frame.payload.size()) + " payload bytes)"
                                   : std::string("before a frame")) +
                              ": " + result.message());
  }
  if (impl_->incoming) frame.payload = impl_->incoming->open(header, frame.payload, impl_->peer);
  return frame;
}

void tcp_link::shutdown() noexcept {
  error_code ignored;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ignored);
}

struct tcp_listener::impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::string address;
};

tcp_listener::tcp_listener(const std::string& address, std::uint16_t port)
    : impl_(std::make_unique<impl>()) {
  impl_->address = address;
  error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) {
    throw control_plane_error("control plane: cannot listen on '" + address +
                              "': not an IP address (" + ec.message() + ")");
  }
  const tcp::endpoint endpoint(ip, port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw control_plane_error("control plane: cannot listen on " + endpoint_text(address, port) +
                              ": " + ec.message());
  }
}

tcp_listener::~tcp_listener() = default;

std::uint16_t tcp_listener::port() const { return impl_->acceptor.local_endpoint().port(); }

std::unique_ptr<tcp_link> tcp_listener::accept(std::chrono::milliseconds timeout) {
  // The accepted socket belongs to the link's own io_context (its later timed reads run
  // there); the acceptor's io_context runs the accept itself.
  auto parts = std::make_unique<tcp_link::impl>();
  bool done = false;
  error_code result;
  impl_->acceptor.async_accept(parts->socket, [&](const error_code& e) {
    result = e;
    done = true;
  });
  const bool finished = run_until_done(impl_->io, done, timeout, [&] {
    error_code ignored;
    impl_->acceptor.cancel(ignored);
  });
  if (!finished) {
    throw listener_timeout("control plane: no peer connected to " +
                           endpoint_text(impl_->address, port()) + " within " +
                           std::to_string(timeout.count()) + " ms");
  }
  if (result) {
    throw control_plane_error("control plane: accepting on " +
                              endpoint_text(impl_->address, port()) +
                              " failed: " + result.message());
  }
  error_code ec;
  const auto remote = parts->socket.remote_endpoint(ec);
  parts->peer = ec ? std::string("an unknown peer")
                   : endpoint_text(remote.address().to_string(), remote.port());
  parts->socket.set_option(tcp::no_delay(true), ec);
  return std::unique_ptr<tcp_link>(new tcp_link(std::move(parts)));
}

}  // namespace kvsim::real
