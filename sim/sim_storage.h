#pragma once
// HiCache L3 storage reads for prefetch, writing real bytes into the rank's host pages.
//
// One I/O actor per rank, (rank, "io", n), like SGLang's prefetch I/O thread: it serves every
// read of its rank that is in flight, one host page per scheduled step, writing the reading
// request's canary (sim/kv_memory.h) into the page, so a read can be half done when an abort
// lands and a write into a host page that was freed (or handed to another request) corrupts
// real bytes. With several reads in flight the actor advances one of them per page, chosen by
// the search (a storage backend with parallel batch gets). A page may stall (virtual time) or
// the read may fail part-way, by the fault profile (transfer_stall, transfer_fail). There is
// no cancel: a read runs until its storage call returns. The actor exists while it has work
// and is spawned again by the next read.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "core/ports.h"
#include "sim/kv_memory.h"
#include "sim/sim_events.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_storage final : public core::storage_io {
 public:
  // `host` is this rank's host memory; it must outlive the storage.
  sim_storage(world& w, core::rank_id rank, kv_memory& host);

  core::storage_handle read_pages(core::room_key owner,
                                  const std::vector<core::page_index>& host_pages) override;
  core::storage_poll poll(core::storage_handle handle) override;

  // --- for scenarios (the core polls) ------------------------------------------------------
  // Blocks until the read is no longer in flight.
  core::storage_poll wait(core::storage_handle handle) override;
  // Blocks until `owner`'s latest read has written at least `pages` pages or returned (at
  // once when `owner` has no read): how a scenario lands an abort part-way through a read.
  void wait_progress(core::room_key owner, std::uint32_t pages);
  // How `owner`'s latest read stands (nothing when it never read).
  std::optional<core::storage_poll> state_of(core::room_key owner) const;

 private:
  struct read_record {
    core::room_key owner;
    std::vector<core::page_index> host_pages;
    std::uint32_t written = 0;
    core::storage_poll state = core::storage_poll::in_flight;
  };

  // Shared objects (sim/step_log.h): the storage's books (reads in flight, the latest read
  // per owner), and each read's state (polls read it) and progress (pages written).
  enum class read_part : std::uint8_t { state = 0, progress = 1 };
  std::uint64_t object() const;
  std::uint64_t read_object(core::storage_handle handle, read_part part) const;
  void serve();  // the I/O actor's body
  void end(core::storage_handle handle, bool completed);

  world& world_;
  core::rank_id rank_;
  kv_memory& host_;
  std::map<core::storage_handle, read_record> reads_;
  std::map<core::room_key, core::storage_handle> latest_;
  std::vector<core::storage_handle> in_flight_;  // in submission order
  bool serving_ = false;
  std::uint32_t actors_spawned_ = 0;
  wait_queue progressed_;
  core::storage_handle next_handle_ = 1;
};

}  // namespace kvsim::sim
