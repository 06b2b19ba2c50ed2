#pragma once
// The real backend's data plane in host memory, for tests of the scenario scripts where there
// is no GPU: "streams" are worker threads that run queued operations in order (copies,
// gates, completion marks), so copies really run asynchronously to the script and a gate
// really holds them, as on the device. Collectives of a group are combined on the host.
#include "real_backend/data_plane.h"

namespace kvsim::testing {

class host_data_plane final : public real::data_plane {
 public:
  std::string name() const override { return "host"; }
  std::uint32_t devices() const override { return 1; }
  std::string device_of(std::uint32_t) const override { return "host memory"; }
  std::unique_ptr<real::page_memory> make_pages(std::uint32_t slot, std::uint32_t pages,
                                                std::uint32_t page_bytes) override;
  std::unique_ptr<real::hold_gate> make_gate() override;
  std::unique_ptr<real::gated_transfer_engine> make_transfer_engine(
      core::rank_id rank, real::page_memory& source,
      const std::map<core::rank_id, real::page_memory*>& destinations) override;
  std::unique_ptr<real::host_page_memory> make_host_pages(std::uint32_t slot, std::uint32_t pages,
                                                          std::uint32_t page_bytes) override;
  std::unique_ptr<real::gated_storage> make_storage(std::uint32_t slot, core::rank_id rank,
                                                    real::host_page_memory& host) override;
  std::unique_ptr<real::group_plane> make_group_plane(std::uint32_t members) override;
};

}  // namespace kvsim::testing
