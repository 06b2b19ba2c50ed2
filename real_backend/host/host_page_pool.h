#pragma once
// One rank's pages in the host data plane: a piece of the shared region (shared_region.h),
// so that a copy worker of another process can write them. Each page has a lock word beside
// it: a copy, a canary fill and a check each hold it for their page, so a reader never sees a
// page half-written (on the device the order comes from the stream instead).
//   host_page_pool       KV pages (page_memory): canary fill and check, copies between pools
//   host_host_page_pool  HiCache's host pages (host_page_memory), written by storage reads
#include <cstdint>
#include <span>

#include "real_backend/data_plane.h"

namespace kvsim::real {

// Pages and their lock words laid out in `memory` (host_page_bytes_needed bytes).
class host_page_block {
 public:
  host_page_block(std::span<std::byte> memory, std::uint32_t pages, std::uint32_t page_bytes);
  std::uint32_t pages() const { return pages_; }
  std::uint32_t page_bytes() const { return page_bytes_; }
  std::uint8_t* at(core::page_index page) const;  // throws outside the pool
  void lock(core::page_index page) const;
  void unlock(core::page_index page) const;

 private:
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::uint32_t* locks_;
  std::uint8_t* bytes_;
};

std::size_t host_page_bytes_needed(std::uint32_t pages, std::uint32_t page_bytes);

class host_page_pool final : public page_memory {
 public:
  host_page_pool(std::span<std::byte> memory, std::uint32_t pages, std::uint32_t page_bytes)
      : block_(memory, pages, page_bytes) {}
  std::uint32_t pages() const override { return block_.pages(); }
  std::uint32_t page_bytes() const override { return block_.page_bytes(); }
  void write_canary(core::page_index page, core::room_key writer,
                    std::uint32_t logical_page) override;
  page_check verify(core::page_index page, core::room_key reader,
                    std::uint32_t logical_page) override;
  // One page from `source` into `destination`'s page, both locked for the copy.
  static void copy(const host_page_pool& source, core::page_index from,
                   const host_page_pool& destination, core::page_index to);

 private:
  host_page_block block_;
};

class host_host_page_pool final : public host_page_memory {
 public:
  host_host_page_pool(std::span<std::byte> memory, std::uint32_t pages, std::uint32_t page_bytes)
      : block_(memory, pages, page_bytes) {}
  std::uint32_t pages() const override { return block_.pages(); }
  std::uint32_t page_bytes() const override { return block_.page_bytes(); }
  const std::uint8_t* page(core::page_index page) const override { return block_.at(page); }
  // A storage read landing: the canary of (owner, logical) in `page`, under its lock.
  void fill(core::page_index page, canary_identity id);

 private:
  host_page_block block_;
};

}  // namespace kvsim::real
