#pragma once
// The transfer engine of one prefill rank on GPUs: a transfer's pages are copied with one
// cudaMemcpyAsync each (cudaMemcpyPeerAsync when the destination pool is on another device)
// on one of the rank's worker streams, taken in turn, so that sibling transfers and other
// requests' transfers run side by side as Mooncake's worker threads do; a CUDA event
// recorded behind the last page says when the transfer ended. A held request's transfers go
// on a stream of their own, with a gate kernel queued in front of the request's page
// `before_page` (the simulator's hold); ungated work never queues behind a gate
// (copy_lanes.h). Like Mooncake, there is no cancel of queued device work: cancel() confirms
// only a transfer that already ended.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "real_backend/cuda/copy_lanes.h"
#include "real_backend/cuda/cuda_gate.h"
#include "real_backend/cuda/cuda_page_pool.h"
#include "real_backend/data_plane.h"

namespace kvsim::real {

class cuda_transfer_engine final : public gated_transfer_engine {
 public:
  static constexpr std::uint32_t default_worker_streams = 4;

  cuda_transfer_engine(core::rank_id rank, cuda_page_pool& source,
                       std::map<core::rank_id, cuda_page_pool*> destinations,
                       std::uint32_t worker_streams = default_worker_streams);
  // A data plane's engine over pages it made (cuda_page_pools); `plane` names that plane in
  // the line thrown for pages it did not make.
  static std::unique_ptr<cuda_transfer_engine> over(
      core::rank_id rank, page_memory& source,
      const std::map<core::rank_id, page_memory*>& destinations, const char* plane);
  ~cuda_transfer_engine() override;
  cuda_transfer_engine(const cuda_transfer_engine&) = delete;
  cuda_transfer_engine& operator=(const cuda_transfer_engine&) = delete;

  core::transfer_handle submit(const core::transfer_request& request) override;
  core::transfer_poll poll(core::transfer_handle handle) override;
  bool cancel(core::transfer_handle handle) override;

  // `gate` must be a cuda_gate.
  void hold(core::room_key owner, hold_gate& gate, std::uint32_t before_page) override;
  std::vector<held_transfer> held_at(const hold_gate& gate) const override;
  std::vector<ended_transfer> take_ended() override;

  // The worker streams, in the order submit() takes them for ungated transfers (the
  // benchmark's raw copies use the same ones, so that both sides copy the same way).
  const std::vector<cudaStream_t>& streams() const { return worker_streams_; }

 private:
  struct transfer_record {
    core::transfer_request request;
    cudaEvent_t done = nullptr;
    core::transfer_poll state = core::transfer_poll::in_flight;
    const cuda_gate* held_by = nullptr;
    std::uint32_t before_page = 0;
  };
  cudaEvent_t take_event();
  cudaStream_t stream_of(std::size_t lane);
  cuda_page_pool& destination_of(core::rank_id rank) const;

  core::rank_id rank_;
  cuda_page_pool& source_;
  std::map<core::rank_id, cuda_page_pool*> destinations_;
  std::vector<cudaStream_t> worker_streams_;
  std::vector<cudaStream_t> held_streams_;  // lane worker_lanes() + i; made when first used
  copy_lanes lanes_;
  std::map<const hold_gate*, cuda_gate*> gates_;  // every gate hold() was given
  std::vector<cudaEvent_t> spare_events_;  // reused: an event per transfer, not per submit call
  std::map<core::transfer_handle, transfer_record> transfers_;
  std::vector<ended_transfer> ended_;
  core::transfer_handle next_handle_ = 1;
};

}  // namespace kvsim::real
