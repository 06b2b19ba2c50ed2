#include "real_backend/cuda/cuda_process_plane.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "real_backend/cuda/cuda_check.h"
#include "real_backend/cuda/cuda_gate.h"
#include "real_backend/cuda/cuda_page_pool.h"
#include "real_backend/cuda/cuda_transfer_engine.h"
#include "real_backend/cuda/devices.h"
#include "real_backend/errors.h"
#include "real_backend/scripts/script_board.h"

namespace kvsim::real {
namespace {

constexpr const char* process_plane_name = "the CUDA process plane";

constexpr std::size_t gate_bytes = 8;

// A pool's place in the region: who exported it, and how to open it.
struct exported_pool {
  std::uint32_t lock;       // lock_word: the first maker allocates while it holds it
  std::uint32_t published;  // 1: `handle` is set
  std::uint32_t pages;
  std::uint32_t page_bytes;
  cudaIpcMemHandle_t handle;
};

[[noreturn]] void transfers_only(const char* what) {
  throw real_backend_error(std::string("--data-plane cuda --ranks 2 runs transfer scenarios; ") +
                           what + " are not built across processes");
}

}  // namespace

std::size_t cuda_process_plane::region_bytes(std::uint32_t pages_per_rank) {
  return std::size_t{gates_max} * gate_bytes + 4 * sizeof(exported_pool) +
         board_bytes(pages_per_rank) + (std::size_t{1} << 20);
}

cuda_process_plane::cuda_process_plane(shared_region region, int device)
    : region_(std::move(region)), device_(device) {
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  gates_ = region_.carve("cuda-gates", std::size_t{gates_max} * gate_bytes);
  KVSIM_CUDA_CHECK(cudaHostRegister(gates_.data(), gates_.size(),
                                    cudaHostRegisterMapped | cudaHostRegisterPortable));
}

cuda_process_plane::~cuda_process_plane() { KVSIM_CUDA_WARN(cudaHostUnregister(gates_.data())); }

std::string cuda_process_plane::device_of(std::uint32_t) const {
  return "device " + std::to_string(device_) + " (" + device_name(device_) + ")";
}

std::unique_ptr<page_memory> cuda_process_plane::make_pages(std::uint32_t slot, std::uint32_t pages,
                                                            std::uint32_t page_bytes) {
  const std::string tag = "cuda-pool/" + std::to_string(slot) + "/" + std::to_string(pools_made_++);
  auto& entry = *reinterpret_cast<exported_pool*>(region_.carve(tag, sizeof(exported_pool)).data());
  // Held while this process decides whether it exports the pool or opens it.
  struct held_word {
    explicit held_word(std::uint32_t& w) : word(w) { lock_word(word); }
    ~held_word() { unlock_word(word); }
    std::uint32_t& word;
  } held(entry.lock);
  if (std::atomic_ref<std::uint32_t>(entry.published).load(std::memory_order_acquire) == 0) {
    auto pool = std::make_unique<cuda_page_pool>(device_, pages, page_bytes);
    entry.pages = pages;
    entry.page_bytes = page_bytes;
    entry.handle = pool->exported();
    std::atomic_ref<std::uint32_t>(entry.published).store(1, std::memory_order_release);
    return pool;
  }
  if (entry.pages != pages || entry.page_bytes != page_bytes) {
    throw real_backend_error("the pool " + tag + " was exported with " +
                             std::to_string(entry.pages) + " pages of " +
                             std::to_string(entry.page_bytes) + " bytes, not " +
                             std::to_string(pages) + " of " + std::to_string(page_bytes));
  }
  return cuda_page_pool::open_exported(device_, pages, page_bytes, entry.handle);
}

std::unique_ptr<hold_gate> cuda_process_plane::make_gate() {
  if (gates_made_ == gates_max) {
    throw real_backend_error("CUDA process plane: more than " + std::to_string(gates_max) +
                             " gates");
  }
  auto* words =
      reinterpret_cast<std::uint32_t*>(gates_.data() + std::size_t{gates_made_++} * gate_bytes);
  return std::make_unique<cuda_gate>(words);
}

std::unique_ptr<gated_transfer_engine> cuda_process_plane::make_transfer_engine(
    core::rank_id rank, page_memory& source,
    const std::map<core::rank_id, page_memory*>& destinations) {
  return cuda_transfer_engine::over(rank, source, destinations, process_plane_name);
}

std::unique_ptr<host_page_memory> cuda_process_plane::make_host_pages(std::uint32_t, std::uint32_t,
                                                                      std::uint32_t) {
  transfers_only("HiCache host pages");
}

std::unique_ptr<gated_storage> cuda_process_plane::make_storage(std::uint32_t, core::rank_id,
                                                                host_page_memory&) {
  transfers_only("HiCache storage reads");
}

std::unique_ptr<group_plane> cuda_process_plane::make_group_plane(std::uint32_t) {
  transfers_only("rank groups");
}

std::span<std::byte> cuda_process_plane::shared_words(const std::string& tag, std::size_t bytes) {
  return region_.carve("words/" + tag, bytes);
}

}  // namespace kvsim::real
