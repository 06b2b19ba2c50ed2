#include "real_backend/cuda/copy_lanes.h"

namespace kvsim::real {

copy_lanes::copy_lanes(std::size_t worker_lanes) : worker_lanes_(worker_lanes == 0 ? 1 : worker_lanes) {}

void copy_lanes::hold(core::room_key owner, const hold_gate& gate, std::uint32_t before_page) {
  holds_[owner] = hold_rule{&gate, before_page};
  // A new hold counts the request's pages afresh (the simulator counts only held pages).
  for (auto& [key, lane] : held_lanes_) {
    if (key.first == owner) {
      lane.pages_queued = 0;
      lane.gate_queued = false;
    }
  }
}

lane_placement copy_lanes::place(const core::transfer_request& request) {
  const auto hold = holds_.find(request.owner);
  if (hold == holds_.end()) {
    const std::size_t lane = next_worker_;
    next_worker_ = (next_worker_ + 1) % worker_lanes_;
    return lane_placement{lane};
  }
  const auto key = std::make_pair(request.owner, request.destination_rank);
  auto it = held_lanes_.find(key);
  if (it == held_lanes_.end()) {
    it = held_lanes_.emplace(key, held_lane{worker_lanes_ + held_lanes_.size()}).first;
  }
  held_lane& lane = it->second;
  const std::uint64_t pages = request.source_pages.size();
  const std::uint64_t before = hold->second.before_page;
  lane_placement placement{lane.lane};
  if (lane.gate_queued) {
    // Queued behind the gate: nothing of it lands before the gate opens.
    placement.gate = hold->second.gate;
  } else if (before >= lane.pages_queued && before < lane.pages_queued + pages) {
    placement.gate = hold->second.gate;
    placement.gate_before_page = static_cast<std::uint32_t>(before - lane.pages_queued);
    placement.queues_gate = true;
    lane.gate_queued = true;
  }
  lane.pages_queued += pages;
  return placement;
}

}  // namespace kvsim::real
