#pragma once
// `kvsim real --data-plane host`: the real backend's data plane in host memory, no GPU
// needed. KV pages and HiCache host pages live in a shared region (memfd, shared_region.h),
// so that the ranks may be separate processes: prefill's copy workers write decode's pages
// directly, as a GPU's copy engine writes a peer's memory. Copies and storage reads run on
// worker threads (host_transfer_engine.h, host_storage.h); gates are words in the region
// that a worker really waits on (host_gate.h) and any process may open. Collectives of a
// rank group combine on the host (its ranks share this one "device").
//
// A plane made without a region makes its own (one process: `--ranks 1`, the tests); a rank
// process attaches to the region its parent made. Pieces are named by kind and order
// ("pages/1/0": slot 1's first pool; "gate/3"), so two processes that build the same
// scenario find the same pieces.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "real_backend/data_plane.h"
#include "real_backend/host/shared_region.h"

namespace kvsim::real {

class host_data_plane final : public data_plane {
 public:
  // The in-process capacity: sparse, only the pages a run touches are backed.
  static constexpr std::size_t default_capacity_bytes = std::size_t{2} << 30;
  static constexpr std::uint32_t gates_max = 65536;

  host_data_plane();
  explicit host_data_plane(shared_region region);

  std::string name() const override { return "host"; }
  std::uint32_t devices() const override { return 1; }
  std::string device_of(std::uint32_t) const override { return "host memory"; }
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
  std::string next_tag(const std::string& kind);
  shared_region region_;
  std::map<std::string, std::uint32_t> made_;  // pieces made so far, per kind
  std::uint32_t gates_made_ = 0;
};

}  // namespace kvsim::real
