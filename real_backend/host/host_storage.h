#pragma once
// HiCache's L3 storage in the host data plane: read_pages writes the canary of (owner, j)
// into the j-th host page from a worker thread, as if the storage held that request's KV;
// a gate held for an owner makes the worker wait before any of that read's pages lands.
#include <cstdint>
#include <map>

#include "real_backend/data_plane.h"
#include "real_backend/host/host_gate.h"
#include "real_backend/host/host_page_pool.h"
#include "real_backend/host/host_stream.h"

namespace kvsim::real {

class host_storage final : public gated_storage {
 public:
  explicit host_storage(host_host_page_pool& host) : host_(host) {}
  ~host_storage() override { stream_.wait_idle(); }

  core::storage_handle read_pages(core::room_key owner,
                                  const std::vector<core::page_index>& pages) override;
  core::storage_poll poll(core::storage_handle handle) override;
  core::storage_poll wait(core::storage_handle handle) override;
  void hold(core::room_key owner, hold_gate& gate) override;
  void wait_idle() override { stream_.wait_idle(); }

 private:
  host_host_page_pool& host_;
  std::map<core::storage_handle, std::uint64_t> reads_;  // handle -> the stream's ticket
  std::map<core::room_key, host_gate*> holds_;
  core::storage_handle next_handle_ = 1;
  host_stream stream_;  // last: its worker may use everything above until it ends
};

}  // namespace kvsim::real
