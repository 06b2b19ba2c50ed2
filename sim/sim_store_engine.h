#pragma once
// Simulated store jobs (core::store_engine): a rank's asynchronous copies of device pages into
// host memory or storage, as an offload connector's worker or HiCache's write-back thread runs
// them. One store actor per rank, (rank, "store", n), serves every job in flight, reading one
// device page per scheduled step (verifying its bytes against the job owner's canary, so a page
// the pool handed to another request and that was written since is found as foreign bytes: the
// store kept KV that does not belong to its key, DOMAIN.md I7). With several jobs in flight the
// search picks which advances; a page may stall (virtual time) or the job may fail part-way, by
// the fault profile (transfer_stall, transfer_fail). A job ends on the actor; its completion
// waits here until the rank's event loop takes it (take_completions) and hands it to the core,
// as a connector's get_finished reports stores once per engine step.
#include <cstdint>
#include <map>
#include <vector>

#include "core/ports.h"
#include "sim/kv_memory.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_store_engine final : public core::store_engine {
 public:
  struct completion {
    core::store_job_id job = 0;
    core::room_key owner;
    bool stored = true;
  };

  // `device` is this rank's KV memory; it must outlive the engine.
  sim_store_engine(world& w, core::rank_id rank, kv_memory& device);

  void submit(core::store_job_id job, core::room_key owner,
              const std::vector<core::page_index>& pages) override;

  // --- for the rank's event loop ----------------------------------------------------------
  // The jobs that ended since the last call, in the order they ended.
  std::vector<completion> take_completions();
  // Jobs still copying, plus completions not yet taken.
  std::size_t outstanding() const;

 private:
  struct job_record {
    core::room_key owner;
    std::vector<core::page_index> pages;
    std::uint32_t read = 0;
  };

  std::uint64_t object() const;
  void serve();  // the store actor's body
  void end(core::store_job_id job, bool stored);

  world& world_;
  core::rank_id rank_;
  kv_memory& device_;
  std::map<core::store_job_id, job_record> in_flight_;  // by id: the search picks among them
  std::vector<completion> completed_;
  bool serving_ = false;
  std::uint32_t actors_spawned_ = 0;
};

}  // namespace kvsim::sim
