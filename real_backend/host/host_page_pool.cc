#include "real_backend/host/host_page_pool.h"

#include <cstring>
#include <string>

#include "real_backend/errors.h"
#include "real_backend/host/shared_region.h"

namespace kvsim::real {
namespace {

std::size_t lock_bytes(std::uint32_t pages) {
  return (std::size_t{pages} * sizeof(std::uint32_t) + 63) / 64 * 64;
}

}  // namespace

std::size_t host_page_bytes_needed(std::uint32_t pages, std::uint32_t page_bytes) {
  return lock_bytes(pages) + std::size_t{pages} * page_bytes;
}

host_page_block::host_page_block(std::span<std::byte> memory, std::uint32_t pages,
                                 std::uint32_t page_bytes)
    : pages_(pages),
      page_bytes_(page_bytes),
      locks_(reinterpret_cast<std::uint32_t*>(memory.data())),
      bytes_(reinterpret_cast<std::uint8_t*>(memory.data()) + lock_bytes(pages)) {
  if (memory.size() < host_page_bytes_needed(pages, page_bytes)) {
    throw real_backend_error("host data plane: " + std::to_string(memory.size()) +
                             " bytes cannot hold " + std::to_string(pages) + " pages of " +
                             std::to_string(page_bytes) + " bytes");
  }
}

std::uint8_t* host_page_block::at(core::page_index page) const {
  if (page >= pages_) {
    throw real_backend_error("host data plane: page " + std::to_string(page) +
                             " is outside a pool of " + std::to_string(pages_));
  }
  return bytes_ + std::size_t{page} * page_bytes_;
}

void host_page_block::lock(core::page_index page) const { lock_word(locks_[page]); }
void host_page_block::unlock(core::page_index page) const { unlock_word(locks_[page]); }

void host_page_pool::write_canary(core::page_index page, core::room_key writer,
                                  std::uint32_t logical_page) {
  std::uint8_t* bytes = block_.at(page);
  block_.lock(page);
  fill_canary_host(bytes, block_.page_bytes(), {writer.room, writer.generation, logical_page});
  block_.unlock(page);
}

page_check host_page_pool::verify(core::page_index page, core::room_key reader,
                                  std::uint32_t logical_page) {
  const std::uint8_t* bytes = block_.at(page);
  page_check c;
  block_.lock(page);
  c.intact = matches_canary_host(bytes, block_.page_bytes(),
                                 {reader.room, reader.generation, logical_page});
  c.found = owner_of_bytes_host(bytes, block_.page_bytes());
  block_.unlock(page);
  return c;
}

void host_page_pool::copy(const host_page_pool& source, core::page_index from,
                          const host_page_pool& destination, core::page_index to) {
  const std::uint8_t* in = source.block_.at(from);
  std::uint8_t* out = destination.block_.at(to);
  // Always source first: copies go one way (prefill's pool into decode's), so no cycle.
  source.block_.lock(from);
  destination.block_.lock(to);
  std::memcpy(out, in, std::min(source.page_bytes(), destination.page_bytes()));
  destination.block_.unlock(to);
  source.block_.unlock(from);
}

void host_host_page_pool::fill(core::page_index page, canary_identity id) {
  std::uint8_t* bytes = block_.at(page);
  block_.lock(page);
  fill_canary_host(bytes, block_.page_bytes(), id);
  block_.unlock(page);
}

}  // namespace kvsim::real
