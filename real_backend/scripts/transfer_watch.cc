#include "real_backend/scripts/transfer_watch.h"

#include <variant>
#include <vector>

namespace kvsim::real {

std::string transfer_watch::counted_text(core::room_key key) const {
  const std::lock_guard lock(mutex_);
  const auto it = armed_.find(key);
  if (it == armed_.end()) return "none armed";
  return std::to_string(it->second.counted.size()) + " of " +
         std::to_string(it->second.expected.size());
}

void transfer_watch::observe(const core::event& e) {
  const std::lock_guard lock(mutex_);
  if (const auto* ack = std::get_if<core::drain_ack_sent>(&e.body)) {
    // The data plane's account, not the event's room_closed / in_flight fields.
    const std::uint32_t running = copies_.acked(ack->key);
    if (running == 0) return;
    findings_.add("I2: rank " + std::to_string(e.rank) + " sent the drain-ACK for " +
                  core::to_string(ack->key) + " to rank " + std::to_string(ack->to) +
                  " while its transfer was still in flight");
    return;
  }
  if (e.rank != decode_rank_) return;
  if (const auto* armed = std::get_if<core::abort_armed>(&e.body)) {
    auto& a = armed_[armed->key];
    a.expected.insert(armed->expected_ranks.begin(), armed->expected_ranks.end());
  } else if (const auto* counted = std::get_if<core::drain_ack_counted>(&e.body)) {
    armed_[counted->key].counted.insert(counted->from);
  } else if (const auto* freed = std::get_if<core::page_freed>(&e.body)) {
    const auto it = armed_.find(freed->owner);
    if (it == armed_.end() || reported_.contains(freed->owner)) return;
    std::vector<core::rank_id> missing;
    for (core::rank_id r : it->second.expected) {
      if (!it->second.counted.contains(r)) missing.push_back(r);
    }
    if (missing.empty()) return;
    reported_.insert(freed->owner);
    std::string who;
    for (core::rank_id r : missing) who += (who.empty() ? "" : ", ") + std::to_string(r);
    findings_.add("I3: rank " + std::to_string(e.rank) + " freed page " +
                  std::to_string(freed->page) + " of " + core::to_string(freed->owner) +
                  " while the drain-ACK from rank " + who + " was still missing (abort armed, " +
                  std::to_string(it->second.counted.size()) + " of " +
                  std::to_string(it->second.expected.size()) + " counted)");
  }
}

}  // namespace kvsim::real
