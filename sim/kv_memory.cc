#include "sim/kv_memory.h"

#include <cstring>

#include "sim/sim_assert.h"
#include "spec/canary.h"

namespace kvsim::sim {
namespace {

// The pattern is the contract's (spec/canary.h): the real backend's pages carry the same bytes.
std::uint8_t canary_byte(core::room_key key, std::uint32_t logical_page, std::uint32_t offset) {
  return spec::canary_byte(key.room, key.generation, logical_page, offset);
}

template <class T>
void put(std::uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

template <class T>
T get(const std::uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

}  // namespace

kv_memory::kv_memory(world& w, core::rank_id rank, std::uint32_t pages, std::uint32_t page_bytes)
    : world_(w),
      rank_(rank),
      pages_(pages),
      page_bytes_(page_bytes),
      bytes_(std::size_t{pages} * page_bytes, 0) {
  KVSIM_SIM_ASSERT(page_bytes > header_bytes, "a page must hold more than its canary header");
  // The bytes are part of the run's terminal state (world::terminal_digest). The world
  // only asks while the run's parts, this pool among them, still exist.
  world_.add_state_digest([this](const std::function<void(std::uint64_t)>& add) {
    add(rank_);
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const std::uint8_t byte : bytes_) hash = (hash ^ byte) * 0x100000001b3ULL;
    add(hash);
  });
}

std::uint8_t* kv_memory::page_data(core::page_index page) {
  KVSIM_SIM_ASSERT_LT(page, pages_, "page outside the simulated pool");
  return bytes_.data() + std::size_t{page} * page_bytes_;
}

const std::uint8_t* kv_memory::page_data(core::page_index page) const {
  KVSIM_SIM_ASSERT_LT(page, pages_, "page outside the simulated pool");
  return bytes_.data() + std::size_t{page} * page_bytes_;
}

void kv_memory::write_canary(core::page_index page, core::room_key writer,
                             std::uint32_t logical_page) {
  fill_canary(page, writer, logical_page);
  world_.emit(page_written{rank_, page, writer, logical_page});
}

void kv_memory::fill_canary(core::page_index page, core::room_key writer,
                            std::uint32_t logical_page) {
  world_.touch(page_object(rank_, page), access::write);
  std::uint8_t* data = page_data(page);
  put(data, writer.room);
  put(data + 8, writer.generation);
  put(data + 12, logical_page);
  for (std::uint32_t offset = header_bytes; offset < page_bytes_; ++offset) {
    data[offset] = canary_byte(writer, logical_page, offset);
  }
}

bool kv_memory::matches(core::page_index page, core::room_key key,
                        std::uint32_t logical_page) const {
  world_.touch(page_object(rank_, page), access::read);
  const std::uint8_t* data = page_data(page);
  if (get<core::room_id>(data) != key.room || get<core::generation_t>(data + 8) != key.generation ||
      get<std::uint32_t>(data + 12) != logical_page) {
    return false;
  }
  for (std::uint32_t offset = header_bytes; offset < page_bytes_; ++offset) {
    if (data[offset] != canary_byte(key, logical_page, offset)) return false;
  }
  return true;
}

std::optional<core::room_key> kv_memory::owner_of_bytes(core::page_index page,
                                                        std::uint32_t* logical_page) const {
  const std::uint8_t* data = page_data(page);
  const core::room_key claimed{get<core::room_id>(data), get<core::generation_t>(data + 8)};
  const auto logical = get<std::uint32_t>(data + 12);
  if (!matches(page, claimed, logical)) return std::nullopt;
  if (logical_page != nullptr) *logical_page = logical;
  return claimed;
}

bool kv_memory::verify(core::page_index page, core::room_key reader, std::uint32_t logical_page) {
  const bool intact = matches(page, reader, logical_page);
  world_.emit(page_read{rank_, page, reader, logical_page, intact,
                        intact ? std::optional<core::room_key>(reader) : owner_of_bytes(page)});
  return intact;
}

void kv_memory::copy_from(const kv_memory& source, core::page_index source_page,
                          core::page_index destination_page) {
  KVSIM_SIM_ASSERT(source.page_bytes_ == page_bytes_, "pools with different page sizes");
  world_.touch(page_object(source.rank_, source_page), access::read);
  world_.touch(page_object(rank_, destination_page), access::write);
  std::memcpy(page_data(destination_page), source.page_data(source_page), page_bytes_);
}

}  // namespace kvsim::sim
