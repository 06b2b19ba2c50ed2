#include "real_backend/wire/peer_acceptor.h"

#include <algorithm>
#include <string_view>
#include <thread>

#include "real_backend/errors.h"
#include "real_backend/wire/wait_text.h"

namespace kvsim::real {
namespace {

using clock_type = std::chrono::steady_clock;

std::chrono::milliseconds left_until(clock_type::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
}

}  // namespace

peer_acceptor::peer_acceptor(tcp_listener& listener, const link_key& key, core::rank_id self,
                             refusal_log log, std::chrono::milliseconds handshake)
    : listener_(listener), key_(key), self_(self), log_(std::move(log)), handshake_(handshake) {}

void peer_acceptor::refuse(const std::string& line) {
  ++refused_;
  constexpr std::string_view prefix = "control plane: ";
  last_refusal_ = line.starts_with(prefix) ? line.substr(prefix.size()) : line;
  log_(line + " (" + std::to_string(refused_) + " refused so far)");
}

authenticated_link peer_acceptor::next(clock_type::time_point deadline,
                                       std::chrono::milliseconds patience,
                                       const std::string& waiting_for) {
  for (;;) {
    const std::chrono::milliseconds left = left_until(deadline);
    if (left <= std::chrono::milliseconds(0)) give_up(patience, waiting_for);
    std::unique_ptr<tcp_link> link;
    try {
      link = listener_.accept(left);
    } catch (const listener_timeout&) {
      continue;  // the deadline, looked at above
    } catch (const control_plane_error& e) {
      // The kernel dropped a connection before it was accepted, or is out of descriptors
      // for a moment: neither is the peers' fault. Pause, then accept again.
      refuse(e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const auto budget = std::clamp(left_until(deadline), std::chrono::milliseconds(1), handshake_);
    try {
      accepted_link accepted = authenticate_acceptor(*link, key_, self_, budget);
      return {std::move(link), std::move(accepted)};
    } catch (const control_plane_error& e) {
      refuse(e.what());
    }
    // `link` closes here: nothing of it is kept.
  }
}

void peer_acceptor::give_up(std::chrono::milliseconds patience, const std::string& waiting_for) {
  const std::string waited = "rank " + std::to_string(self_) + " waited " + seconds_text(patience) +
                             " on port " + std::to_string(listener_.port()) + " for " + waiting_for;
  if (refused_ == 0) {
    throw control_plane_error("control plane: timed out: " + waited + "; nobody connected");
  }
  throw link_refused("control plane: handshake failed: " + waited + ", and none of the " +
                     std::to_string(refused_) + " connection(s) it accepted proved the run's key " +
                     "(the last: " + last_refusal_ + ")");
}

}  // namespace kvsim::real
