#pragma once
// The data plane of `kvsim real`: KV pages in cudaMalloc pools, gated cudaMemcpyAsync
// transfers, gated storage reads into pinned host pages, and NCCL for the rank groups. Ranks
// (slots) are laid onto the devices in turn; with fewer devices than ranks, ranks share a
// device (their peers are simulated on it) and the report says so.
#include <memory>
#include <string>
#include <vector>

#include "real_backend/data_plane.h"

namespace kvsim::real {

class cuda_data_plane final : public data_plane {
 public:
  // `devices`: the CUDA devices to use (at least one).
  explicit cuda_data_plane(std::vector<int> devices);

  std::string name() const override { return "cuda"; }
  std::uint32_t devices() const override { return static_cast<std::uint32_t>(devices_.size()); }
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
  // Members <= devices: one NCCL rank per member on its own device (ncclCommInitAll).
  // Otherwise one NCCL rank on the first device; the host combines the members' values.
  std::unique_ptr<group_plane> make_group_plane(std::uint32_t members) override;

  int cuda_device(std::uint32_t slot) const { return devices_[slot % devices_.size()]; }

 private:
  std::vector<int> devices_;
};

}  // namespace kvsim::real
