#pragma once
// The transfer engine of one source rank. Each submitted transfer runs as its own actor,
// (rank, "transfer", id): it copies one page per step, reading the real source bytes and
// writing the real destination bytes, so a transfer that outlives its pages' ownership
// corrupts real data. Faults from the run's profile: a copy step stalls (virtual time
// passes), the transfer fails part-way (each sibling draws its own fate), or a poll answers
// "timed out" while the copy still runs (Mooncake's sync wrapper, DOMAIN.md B12); a later
// poll answers the copy's real end, which is the transport's confirmation. Like Mooncake,
// there is no cancel of a transfer that has started. When the rank dies (stop), the writes
// its NIC already has keep landing page by page until it stops them (the search decides when,
// per page); once none runs any more the transport can confirm the teardown (quiet).
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/ports.h"
#include "sim/kv_memory.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_transfer_engine final : public core::transfer_engine {
 public:
  // `memories` maps every rank to its simulated pool.
  sim_transfer_engine(world& w, core::rank_id rank, std::map<core::rank_id, kv_memory*> memories);

  core::transfer_handle submit(const core::transfer_request& request) override;
  core::transfer_poll poll(core::transfer_handle handle) override;
  bool cancel(core::transfer_handle handle) override;

  // Blocks the calling actor until the transfer is terminal (not a core port: scenarios use
  // it where the real code would wait on a future).
  core::transfer_poll wait(core::transfer_handle handle);
  // The pools of every rank (when the engine is built before all pools exist).
  void set_memories(const std::map<core::rank_id, kv_memory*>& memories);
  // Holds every transfer of `owner` at `g` before it copies the request's page `before_page`:
  // when `before_page` pages of the request have reached that destination rank, over all of
  // its chunks and sibling transfers (so a gate can sit in a later chunk).
  void hold(core::room_key owner, gate& g, std::uint32_t before_page);
  // The rank died: nothing new starts; what runs may write a few pages more, then stops.
  void stop();
  // No transfer of this engine is running.
  bool quiet() const;

 private:
  struct transfer_record {
    core::transfer_request request;
    core::transfer_poll state = core::transfer_poll::in_flight;
    std::uint32_t pages_copied = 0;
    bool started = false;
    bool cancelled = false;
  };
  struct hold_rule {
    gate* at = nullptr;
    std::uint32_t before_page = 0;
  };

  enum class transfer_part : std::uint8_t { state = 0, progress = 1 };
  std::uint64_t engine_object() const;
  std::uint64_t transfer_object(core::transfer_handle handle, transfer_part part) const;
  void execute(core::transfer_handle handle);
  transfer_record& record(core::transfer_handle handle);
  const transfer_record& record(core::transfer_handle handle) const;
  kv_memory& memory(core::rank_id rank) const;
  void end(core::transfer_handle handle, core::transfer_poll outcome);

  world& world_;
  core::rank_id rank_;
  // By rank (a null slot: a rank without a pool) and by handle - 1 (handles count up from 1 and
  // a record is never dropped): a page copy looks both up, and with 32 decode ranks the trees
  // these were made every copy's lookups grow with the world.
  std::vector<kv_memory*> memories_;
  std::deque<transfer_record> transfers_;
  std::map<core::room_key, hold_rule> holds_;
  std::map<std::pair<core::room_key, core::rank_id>, std::uint32_t> request_pages_copied_;
  wait_queue ended_;
  core::transfer_handle next_handle_ = 1;
  bool stopped_ = false;
};

}  // namespace kvsim::sim
