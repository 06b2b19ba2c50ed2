#pragma once
// `kvsim real --data-plane cuda --ranks 2`: a transfer scenario's prefill and decode as two
// processes on one GPU (the CUDA counterpart of host_data_plane.h's shared region). UNTESTED
// ON HARDWARE: written and compiled without a GPU; tools/gpu_check.sh runs it when one is
// lent (real_backend/README.md).
//
// Every process of the run (the parent and its two rank processes) builds the scenario's
// pieces in the same order over the memfd region the parent made (shared_region.h):
//   - KV pages: the first process to make a slot's pool (the parent, which builds the
//     script's context before it starts the ranks) allocates it with cudaMalloc and writes
//     its CUDA IPC handle (cudaIpcGetMemHandle) into the region; the others open it from the
//     handle (cudaIpcOpenMemHandle), so that prefill's copies write decode's pages and the
//     landing and read checks (I1, I7) read decode's bytes back, whichever process they run in;
//   - gates: two words each in the region, which every process registers with CUDA as mapped
//     host memory (cudaHostRegister): prefill's gate kernel spins on them, the script opens
//     them with a store from the parent;
//   - the script board (shared_words), as on the host plane.
// The handles travel in the region the parent handed down (an inherited fd: nothing on the
// network reaches it), not on the control plane. Every rank uses device 0 (one GPU: the ranks
// share it). Transfer scenarios only: no host pages, storage or rank groups.
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "real_backend/data_plane.h"
#include "real_backend/host/shared_region.h"

namespace kvsim::real {

class cuda_process_plane final : public data_plane {
 public:
  static constexpr std::uint32_t gates_max = 4096;

  // The shared memory a transfer scenario's processes need on this plane: gates, handles,
  // the board and the directory (the pages are on the device).
  static std::size_t region_bytes(std::uint32_t pages_per_rank);

  cuda_process_plane(shared_region region, int device);
  ~cuda_process_plane() override;
  cuda_process_plane(const cuda_process_plane&) = delete;
  cuda_process_plane& operator=(const cuda_process_plane&) = delete;

  std::string name() const override { return "cuda"; }
  std::uint32_t devices() const override { return 1; }
  std::string device_of(std::uint32_t slot) const override;
  std::unique_ptr<page_memory> make_pages(std::uint32_t slot, std::uint32_t pages,
                                          std::uint32_t page_bytes) override;
  std::unique_ptr<hold_gate> make_gate() override;
  std::unique_ptr<gated_transfer_engine> make_transfer_engine(
      core::rank_id rank, page_memory& source,
      const std::map<core::rank_id, page_memory*>& destinations) override;
  std::unique_ptr<host_page_memory> make_host_pages(std::uint32_t slot, std::uint32_t pages,
                                                    std::uint32_t page_bytes) override;
  std::unique_ptr<gated_storage> make_storage(std::uint32_t slot, core::rank_id rank,
                                              host_page_memory& host) override;
  std::unique_ptr<group_plane> make_group_plane(std::uint32_t members) override;
  std::span<std::byte> shared_words(const std::string& tag, std::size_t bytes) override;

  shared_region& region() { return region_; }

 private:
  shared_region region_;
  int device_;
  std::span<std::byte> gates_;  // registered with CUDA (mapped) for this process's lifetime
  std::uint32_t gates_made_ = 0;
  std::uint32_t pools_made_ = 0;
};

}  // namespace kvsim::real
