#pragma once
// The host data plane's transfer engine: each page of a transfer is a memcpy run by a worker
// thread (host_stream.h), beside the rank that submitted it, into pages that may belong to
// another process (host_page_pool.h over the shared region). A transfer that a gate holds
// gets a worker of its own, its pages before the gate queued ahead of the gate's wait; the
// others are spread over `workers` workers in turn (copy_lanes.h decides, for the CUDA engine
// too, and counts the gate's position over the whole request as the simulator does). So a held transfer never stands in front
// of another one (on a shared worker, a fifth transfer would queue behind the gate and wait
// for it: a stall once seen), as Mooncake gives each transfer its own slice of the engine.
// A transfer has ended once its worker has run everything queued for it; poll() says so.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "real_backend/cuda/copy_lanes.h"
#include "real_backend/data_plane.h"
#include "real_backend/host/host_gate.h"
#include "real_backend/host/host_page_pool.h"
#include "real_backend/host/host_stream.h"

namespace kvsim::real {

class host_transfer_engine final : public gated_transfer_engine {
 public:
  host_transfer_engine(host_page_pool& source, std::map<core::rank_id, host_page_pool*> destinations,
                       std::uint32_t workers = 4);
  ~host_transfer_engine() override;  // waits for every copy (open the gates first)

  core::transfer_handle submit(const core::transfer_request& request) override;
  core::transfer_poll poll(core::transfer_handle handle) override;
  // A copy that has started cannot be called back: cancel says whether it has ended.
  bool cancel(core::transfer_handle handle) override;
  void hold(core::room_key owner, hold_gate& gate, std::uint32_t before_page) override;
  std::vector<held_transfer> held_at(const hold_gate& gate) const override;
  std::vector<ended_transfer> take_ended() override;

 private:
  struct record {
    core::transfer_request request;
    host_stream* stream = nullptr;
    std::uint64_t ticket = 0;
    core::transfer_poll state = core::transfer_poll::in_flight;
    const host_gate* held_by = nullptr;
    std::uint32_t before_page = 0;
  };
  host_page_pool& source_;
  std::map<core::rank_id, host_page_pool*> destinations_;
  copy_lanes lanes_;
  std::vector<std::unique_ptr<host_stream>> streams_;  // one worker per lane, as lanes_ numbers them
  std::map<core::transfer_handle, record> transfers_;
  std::map<const hold_gate*, host_gate*> gates_;  // every gate hold() was given
  std::vector<ended_transfer> ended_;
  core::transfer_handle next_handle_ = 1;
};

}  // namespace kvsim::real
