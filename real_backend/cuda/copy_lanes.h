#pragma once
// Where a transfer's copies are queued, decided on the host with no CUDA call, so that the
// rules can be tested without a GPU (tests/real_backend/copy_lanes_test.cc). A lane is an
// in-order queue: a CUDA stream in cuda_transfer_engine, a worker thread in a host engine.
//
// Two rules, both first-contact failures of plain round-robin:
// - Ungated work never queues behind a gate. Lanes [0, worker_lanes) take ungated transfers
//   in turn; every held request gets a lane of its own (one per request and destination
//   rank), created when its first transfer arrives. With round-robin over four streams, the
//   fifth transfer landed on the stream where a gate kernel spins, and the script waited for
//   it until its patience ran out.
// - A gate stands where the simulator puts it: before the request's page `before_page`,
//   counting the request's pages to that destination over all of its chunks and sibling
//   transfers (sim/sim_transfer_engine.h, hold), not before page `before_page` of each
//   transfer. Every transfer of a held request goes on its lane in submit order, so the pages
//   counted before the gate are exactly the ones queued before it; later transfers of the
//   request queue behind it, as the simulator makes every transfer of the request wait at the
//   gate while the count stands at `before_page`.
// The count starts at hold(): the scripts hold a request before any of its transfers starts.
// A request whose pages never reach `before_page` is never gated (the simulator's gate is
// never passed either), though its transfers still share its lane.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/ids.h"
#include "core/ports.h"

namespace kvsim::real {

class hold_gate;

struct lane_placement {
  std::size_t lane = 0;
  // The transfer is held at `gate`: before its page `gate_before_page`, where the gate is
  // queued now (`queues_gate`), or from its first page, behind a gate queued earlier.
  const hold_gate* gate = nullptr;
  std::uint32_t gate_before_page = 0;
  bool queues_gate = false;  // the caller queues the gate in front of page gate_before_page
};

class copy_lanes {
 public:
  explicit copy_lanes(std::size_t worker_lanes);

  // Holds the later transfers of `owner` at `gate` before the request's page `before_page`.
  void hold(core::room_key owner, const hold_gate& gate, std::uint32_t before_page);
  // Where the next transfer goes; counts its pages.
  lane_placement place(const core::transfer_request& request);
  // Lanes in use so far: the worker lanes, then one per held request and destination.
  std::size_t lanes() const { return worker_lanes_ + held_lanes_.size(); }
  std::size_t worker_lanes() const { return worker_lanes_; }

 private:
  struct hold_rule {
    const hold_gate* gate = nullptr;
    std::uint32_t before_page = 0;
  };
  struct held_lane {
    std::size_t lane = 0;
    std::uint64_t pages_queued = 0;  // of the request, to that destination, since hold()
    bool gate_queued = false;
  };

  std::size_t worker_lanes_;
  std::size_t next_worker_ = 0;
  std::map<core::room_key, hold_rule> holds_;
  std::map<std::pair<core::room_key, core::rank_id>, held_lane> held_lanes_;
};

}  // namespace kvsim::real
