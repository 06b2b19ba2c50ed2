#include "real_backend/host/host_data_plane.h"

#include <stdexcept>

#include "real_backend/errors.h"
#include "real_backend/host/host_gate.h"
#include "real_backend/host/host_page_pool.h"
#include "real_backend/host/host_storage.h"
#include "real_backend/host/host_transfer_engine.h"
#include "real_backend/plane_piece.h"

namespace kvsim::real {
namespace {

constexpr const char* host_plane_name = "the host data plane";

constexpr std::size_t gate_bytes = 8;

class host_group final : public group_plane {
 public:
  bool across_devices() const override { return false; }
  std::int64_t reduce(std::uint32_t, std::int64_t, core::reduce_op,
                      const wait_policy&) override {
    throw real_backend_error("host data plane: its groups combine on the host");
  }
  std::int64_t pass_through(std::int64_t value, core::reduce_op, const wait_policy&) override {
    return value;
  }
};

}  // namespace

host_data_plane::host_data_plane() : region_(shared_region::create(default_capacity_bytes)) {}

host_data_plane::host_data_plane(shared_region region) : region_(std::move(region)) {}

std::string host_data_plane::next_tag(const std::string& kind) {
  return kind + "/" + std::to_string(made_[kind]++);
}

std::unique_ptr<page_memory> host_data_plane::make_pages(std::uint32_t slot, std::uint32_t pages,
                                                         std::uint32_t page_bytes) {
  const std::string tag = next_tag("pages/" + std::to_string(slot));
  return std::make_unique<host_page_pool>(
      region_.carve(tag, host_page_bytes_needed(pages, page_bytes)), pages, page_bytes);
}

std::unique_ptr<hold_gate> host_data_plane::make_gate() {
  if (gates_made_ == gates_max) {
    throw real_backend_error("host data plane: more than " + std::to_string(gates_max) + " gates");
  }
  const std::span<std::byte> all = region_.carve("gates", std::size_t{gates_max} * gate_bytes);
  return std::make_unique<host_gate>(all.subspan(std::size_t{gates_made_++} * gate_bytes, gate_bytes));
}

std::unique_ptr<gated_transfer_engine> host_data_plane::make_transfer_engine(
    core::rank_id, page_memory& source, const std::map<core::rank_id, page_memory*>& destinations) {
  std::map<core::rank_id, host_page_pool*> pools;
  for (const auto& [rank, memory] : destinations)
    pools[rank] = &piece_made_by<host_page_pool>(*memory, host_plane_name, "pages");
  return std::make_unique<host_transfer_engine>(
      piece_made_by<host_page_pool>(source, host_plane_name, "pages"), std::move(pools));
}

std::unique_ptr<host_page_memory> host_data_plane::make_host_pages(std::uint32_t slot,
                                                                   std::uint32_t pages,
                                                                   std::uint32_t page_bytes) {
  const std::string tag = next_tag("host/" + std::to_string(slot));
  return std::make_unique<host_host_page_pool>(
      region_.carve(tag, host_page_bytes_needed(pages, page_bytes)), pages, page_bytes);
}

std::unique_ptr<gated_storage> host_data_plane::make_storage(std::uint32_t, core::rank_id,
                                                             host_page_memory& host) {
  return std::make_unique<host_storage>(
      piece_made_by<host_host_page_pool>(host, host_plane_name, "host pages"));
}

std::unique_ptr<group_plane> host_data_plane::make_group_plane(std::uint32_t) {
  return std::make_unique<host_group>();
}

std::span<std::byte> host_data_plane::shared_words(const std::string& tag, std::size_t bytes) {
  return region_.carve("words/" + tag, bytes);
}

}  // namespace kvsim::real
