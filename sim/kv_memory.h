#pragma once
// Simulated KV memory: one page pool per rank holding real bytes. A writer fills a page with
// a canary derived from (room, generation, logical page, offset); a reader verifies every
// byte against the canary it expects. The first 16 bytes carry the writer's identity, so a
// reader that finds foreign bytes can also say whose they are: corruption is proven from
// data (DOMAIN.md I7), not only from bookkeeping.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "sim/world.h"
#include "spec/canary.h"

namespace kvsim::sim {

class kv_memory {
 public:
  static constexpr std::uint32_t header_bytes = spec::canary_header_bytes;

  kv_memory(world& w, core::rank_id rank, std::uint32_t pages, std::uint32_t page_bytes);
  // The world digests this pool's bytes through a pointer to it: it never moves.
  kv_memory(const kv_memory&) = delete;
  kv_memory& operator=(const kv_memory&) = delete;

  void write_canary(core::page_index page, core::room_key writer, std::uint32_t logical_page);
  // The same bytes without the page_written event, for a writer that reports its own write
  // (a storage read's storage_page_written).
  void fill_canary(core::page_index page, core::room_key writer, std::uint32_t logical_page);
  // Emits page_read with what was found; true when every byte is the reader's canary.
  bool verify(core::page_index page, core::room_key reader, std::uint32_t logical_page);
  // Raw copy of one page from another pool (a transfer's data movement; the transfer emits
  // its own event).
  void copy_from(const kv_memory& source, core::page_index source_page,
                 core::page_index destination_page);
  // Whose canary the page holds, if the bytes are entirely one writer's canary.
  std::optional<core::room_key> owner_of_bytes(core::page_index page,
                                               std::uint32_t* logical_page = nullptr) const;

  core::rank_id rank() const { return rank_; }
  std::uint32_t pages() const { return pages_; }
  std::uint32_t page_bytes() const { return page_bytes_; }

 private:
  std::uint8_t* page_data(core::page_index page);
  const std::uint8_t* page_data(core::page_index page) const;
  bool matches(core::page_index page, core::room_key key, std::uint32_t logical_page) const;

  world& world_;
  core::rank_id rank_;
  std::uint32_t pages_;
  std::uint32_t page_bytes_;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace kvsim::sim
