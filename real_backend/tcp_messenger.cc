#include "real_backend/tcp_messenger.h"

#include "real_backend/control_frame.h"
#include "real_backend/errors.h"

namespace kvsim::real {

tcp_messenger::tcp_messenger(core::rank_id self) : self_(self) {}

tcp_messenger::~tcp_messenger() {
  for (auto& [peer, entry] : links_) entry->link->shutdown();
  for (auto& [peer, entry] : links_) {
    if (entry->reader.joinable()) entry->reader.join();
  }
}

std::uint16_t tcp_messenger::listen(const std::string& address, std::uint16_t port) {
  listener_ = std::make_unique<tcp_listener>(address, port);
  return listener_->port();
}

void tcp_messenger::accept_peers(std::size_t peers, std::chrono::milliseconds timeout) {
  if (!listener_)
    throw control_plane_error("control plane: rank " + std::to_string(self_) +
                              " accepts peers without listening");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (std::size_t i = 0; i < peers; ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    std::unique_ptr<tcp_link> link =
        listener_->accept(std::max(left, std::chrono::milliseconds(1)));
    const received_frame hello = link->read_for(std::max(left, std::chrono::milliseconds(1)));
    if (hello.type != frame_type::hello) {
      throw control_plane_error("control plane: " + link->peer() + " sent a " +
                                to_string(hello.type) + " frame before its hello");
    }
    add_link(decode_hello(hello.payload), std::move(link));
  }
}

void tcp_messenger::connect(core::rank_id peer, const std::string& address, std::uint16_t port,
                            std::chrono::milliseconds timeout) {
  std::unique_ptr<tcp_link> link = tcp_link::connect(address, port, timeout);
  link->write(encode_hello(self_));
  add_link(peer, std::move(link));
}

void tcp_messenger::add_link(core::rank_id peer, std::unique_ptr<tcp_link> link) {
  if (links_.contains(peer)) {
    throw control_plane_error("control plane: rank " + std::to_string(self_) +
                              " already has a link to rank " + std::to_string(peer));
  }
  auto entry = std::make_unique<link_entry>();
  entry->link = std::move(link);
  tcp_link& raw = *entry->link;
  entry->reader = std::thread([this, peer, &raw] { read_loop(peer, raw); });
  links_.emplace(peer, std::move(entry));
}

void tcp_messenger::read_loop(core::rank_id peer, tcp_link& link) {
  try {
    while (std::optional<received_frame> frame = link.read()) {
      if (frame->type != frame_type::control) {
        push("control plane: rank " + std::to_string(peer) + " sent a " + to_string(frame->type) +
             " frame on a control link");
        break;
      }
      push(decode_control(frame->payload));
    }
  } catch (const control_plane_error& e) {
    push(std::string(e.what()) + " (from rank " + std::to_string(peer) + ")");
  }
  const std::lock_guard lock(inbox_mutex_);
  ++links_closed_;
  inbox_changed_.notify_all();
}

void tcp_messenger::push(inbox_item item) {
  const std::lock_guard lock(inbox_mutex_);
  inbox_.push_back(std::move(item));
  inbox_changed_.notify_all();
}

tcp_messenger::link_entry& tcp_messenger::link_to(core::rank_id peer) {
  const auto it = links_.find(peer);
  if (it == links_.end()) {
    throw control_plane_error("control plane: rank " + std::to_string(self_) +
                              " has no link to rank " + std::to_string(peer));
  }
  return *it->second;
}

void tcp_messenger::send(core::rank_id to, const core::control_message& message) {
  send_raw(to, encode_control(message));
}

void tcp_messenger::send_raw(core::rank_id to, std::span<const std::uint8_t> bytes) {
  link_entry& entry = link_to(to);
  const std::lock_guard lock(entry.write_mutex);
  entry.link->write(bytes);
}

std::optional<core::control_message> tcp_messenger::receive_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(inbox_mutex_);
  inbox_changed_.wait_for(lock, timeout, [this] {
    return !inbox_.empty() || (!links_.empty() && links_closed_ == links_.size());
  });
  if (inbox_.empty()) {
    if (!links_.empty() && links_closed_ == links_.size()) {
      throw control_plane_error("control plane: every peer of rank " + std::to_string(self_) +
                                " has closed its connection");
    }
    return std::nullopt;
  }
  inbox_item item = std::move(inbox_.front());
  inbox_.pop_front();
  if (auto* error = std::get_if<std::string>(&item)) throw control_plane_error(*error);
  return std::get<core::control_message>(std::move(item));
}

core::control_message tcp_messenger::receive() {
  for (;;) {
    if (auto message = receive_for(std::chrono::milliseconds(1000))) return *message;
  }
}

}  // namespace kvsim::real
