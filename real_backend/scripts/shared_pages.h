#pragma once
// One rank's KV pages checked from two threads: its own owner thread (decode reading what
// landed: I7) and the peer rank's (prefill's landing check when it sees its transfer end:
// I1, I7). A page_memory answers one thread at a time (a CUDA pool verifies through one
// stream into one pinned verdict), so this serialises the script's calls. The copies into
// the pages go through the transfer engine, not through here.
#include <mutex>

#include "real_backend/data_plane.h"

namespace kvsim::real {

class shared_pages final : public page_memory {
 public:
  explicit shared_pages(page_memory& pages) : pages_(pages) {}
  std::uint32_t pages() const override { return pages_.pages(); }
  std::uint32_t page_bytes() const override { return pages_.page_bytes(); }
  void write_canary(core::page_index page, core::room_key writer,
                    std::uint32_t logical_page) override {
    const std::lock_guard lock(mutex_);
    pages_.write_canary(page, writer, logical_page);
  }
  page_check verify(core::page_index page, core::room_key reader,
                    std::uint32_t logical_page) override {
    const std::lock_guard lock(mutex_);
    return pages_.verify(page, reader, logical_page);
  }

 private:
  page_memory& pages_;
  std::mutex mutex_;
};

}  // namespace kvsim::real
