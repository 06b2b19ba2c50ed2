#include "real_backend/wire/tcp_messenger.h"

#include <iostream>

#include "real_backend/wire/control_frame.h"
#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/peer_acceptor.h"

namespace kvsim::real {

tcp_messenger::tcp_messenger(core::rank_id self, const link_key& key)
    : self_(self),
      key_(key),
      log_([](const std::string& line) { std::cerr << "kvsim real: " << line << "\n"; }) {}

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

void tcp_messenger::accept_peers(std::size_t peers, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds handshake) {
  if (!listener_)
    throw control_plane_error("control plane: rank " + std::to_string(self_) +
                              " accepts peers without listening");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  peer_acceptor acceptor(*listener_, key_, self_, log_, handshake);
  const auto count_refusals = [&] {
    const std::lock_guard lock(inbox_mutex_);
    refused_connections_ += acceptor.refused();
  };
  try {
    for (std::size_t i = 0; i < peers; ++i) {
      authenticated_link peer = acceptor.next(
          deadline, timeout,
          std::to_string(peers) + " peer(s), " + std::to_string(i) + " of them authenticated");
      peer.link->seal(peer.accepted.keys.send, peer.accepted.keys.receive);
      add_link(peer.accepted.peer, std::move(peer.link));
    }
  } catch (...) {
    count_refusals();
    throw;
  }
  count_refusals();
}

std::size_t tcp_messenger::refused_connections() const {
  const std::lock_guard lock(inbox_mutex_);
  return refused_connections_;
}

void tcp_messenger::connect(core::rank_id peer, const std::string& address, std::uint16_t port,
                            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_ptr<tcp_link> link =
      tcp_link::connect(address, port, timeout, "rank " + std::to_string(peer));
  const auto left =
      std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 deadline - std::chrono::steady_clock::now()));
  std::optional<link_session> session;
  try {
    session = authenticate_connector(*link, key_, self_, peer, left);
  } catch (const peer_gone& e) {
    throw peer_gone(std::string(e.what()) + " (rank " + std::to_string(peer) + ")");
  } catch (const control_plane_error& e) {
    refuse_link(e.what());  // `link` closes on the way out
  }
  link->seal(session->send, session->receive);
  add_link(peer, std::move(link));
}

void tcp_messenger::refuse_link(const std::string& line) {
  log_(line);
  throw link_refused(line);
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

// Whatever a peer sends is refused unless it is a well-formed control frame, sealed with the
// link's keys, whose `from` is the rank the link authenticated. A refusal ends the link: a
// peer that sends one is broken or hostile, and nothing it sends later is believed.
void tcp_messenger::read_loop(core::rank_id peer, tcp_link& link) {
  bool refused = false;
  const auto refuse = [&](const std::string& line) {
    log_(line);
    push(line);
    if (peer == steps_from_) push_step_refusal(line);  // a step's reader learns why none comes
    if (collectives_) push_collective(control_plane_error(line));
    link.shutdown();
    refused = true;
  };
  std::string gone_how;
  try {
    while (std::optional<received_frame> frame = link.read()) {
      if (frame->type == frame_type::step) {
        if (peer != steps_from_) {
          refuse("control plane: rank " + std::to_string(peer) + " (" + link.peer() +
                 ") sent a step frame, which " +
                 (steps_from_ ? "only rank " + std::to_string(*steps_from_) + " may send to rank " +
                                    std::to_string(self_)
                              : "rank " + std::to_string(self_) + " takes from nobody") +
                 ": refused, link closed as hostile");
          break;
        }
        push_step(decode_step(frame->payload));
        continue;
      }
      if (frame->type == frame_type::collective) {
        if (!collectives_) {
          refuse("control plane: rank " + std::to_string(peer) + " (" + link.peer() +
                 ") sent a collective frame, which rank " + std::to_string(self_) +
                 " takes from nobody: refused, link closed as hostile");
          break;
        }
        push_collective(collective_delivery{peer, decode_collective(frame->payload)});
        continue;
      }
      if (frame->type != frame_type::control) {
        refuse("control plane: rank " + std::to_string(peer) + " sent a " + to_string(frame->type) +
               " frame on a control link");
        break;
      }
      core::control_message message = decode_control(frame->payload);
      if (message.from != peer) {
        // Spoofing: a peer speaking for another rank (a drain-ACK in the name of a
        // rank that has not drained) would let decode free pages that are still written.
        refuse("control plane: the link of rank " + std::to_string(peer) + " (" + link.peer() +
               ") carried a " + to_string(message.kind) + " claiming to be from rank " +
               std::to_string(message.from) + ": refused, link closed as hostile");
        break;
      }
      push(std::move(message));
    }
  } catch (const peer_gone& e) {
    gone_how = std::string(": ") + e.what();
  } catch (const control_plane_error& e) {
    refuse(std::string(e.what()) + " (from rank " + std::to_string(peer) + ")");
  }
  if (!refused) {
    // The peer closed the link (or it was reset) between frames: after what it sent, this is
    // what the rank reading it learns. Nothing hostile: the peer stopped, most likely died.
    const std::string line = "control plane: peer rank " + std::to_string(peer) + " (" +
                             link.peer() + ") closed its link to rank " + std::to_string(self_) +
                             " (died?)" + gone_how;
    push(peer_gone(line));
    if (peer == steps_from_) push_step_refusal(line);
  }
  if (collectives_) push_collective(collective_delivery{peer, std::nullopt});
  const std::lock_guard lock(inbox_mutex_);
  ++links_closed_;
  if (peer == steps_from_) step_link_closed_ = true;
  inbox_changed_.notify_all();
}

void tcp_messenger::push(inbox_item item) {
  const std::lock_guard lock(inbox_mutex_);
  inbox_.push_back(std::move(item));
  inbox_changed_.notify_all();
}

void tcp_messenger::push_step(std::string line) {
  const std::lock_guard lock(inbox_mutex_);
  step_inbox_.emplace_back(std::move(line));
  inbox_changed_.notify_all();
}

void tcp_messenger::push_step_refusal(const std::string& line) {
  const std::lock_guard lock(inbox_mutex_);
  step_inbox_.emplace_back(control_plane_error(line));
  inbox_changed_.notify_all();
}

void tcp_messenger::push_collective(std::variant<collective_delivery, control_plane_error> item) {
  const std::lock_guard lock(inbox_mutex_);
  collective_inbox_.push_back(std::move(item));
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
      throw control_plane_error("control plane: every link of rank " + std::to_string(self_) +
                                " has closed");
    }
    return std::nullopt;
  }
  inbox_item item = std::move(inbox_.front());
  inbox_.pop_front();
  if (auto* error = std::get_if<std::string>(&item)) throw control_plane_error(*error);
  if (auto* gone = std::get_if<peer_gone>(&item)) throw *gone;
  return std::get<core::control_message>(std::move(item));
}

void tcp_messenger::send_step(core::rank_id to, std::string_view line) {
  send_raw(to, encode_step(line));
}

std::optional<std::string> tcp_messenger::receive_step_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(inbox_mutex_);
  inbox_changed_.wait_for(lock, timeout,
                          [this] { return !step_inbox_.empty() || step_link_closed_; });
  if (step_inbox_.empty()) {
    if (step_link_closed_) {
      throw control_plane_error("control plane: the link from rank " +
                                std::to_string(steps_from_.value_or(0)) + " to rank " +
                                std::to_string(self_) + " has closed");
    }
    return std::nullopt;
  }
  auto item = std::move(step_inbox_.front());
  step_inbox_.pop_front();
  if (auto* refusal = std::get_if<control_plane_error>(&item)) throw *refusal;
  return std::get<std::string>(std::move(item));
}

void tcp_messenger::send_collective(core::rank_id to, const collective_note& note) {
  send_raw(to, encode_collective(note));
}

std::optional<collective_delivery> tcp_messenger::receive_collective_for(
    std::chrono::milliseconds timeout) {
  std::unique_lock lock(inbox_mutex_);
  inbox_changed_.wait_for(lock, timeout, [this] { return !collective_inbox_.empty(); });
  if (collective_inbox_.empty()) return std::nullopt;
  auto item = std::move(collective_inbox_.front());
  collective_inbox_.pop_front();
  if (auto* refusal = std::get_if<control_plane_error>(&item)) throw *refusal;
  return std::get<collective_delivery>(std::move(item));
}

core::control_message tcp_messenger::receive() {
  for (;;) {
    if (auto message = receive_for(std::chrono::milliseconds(1000))) return *message;
  }
}

}  // namespace kvsim::real
