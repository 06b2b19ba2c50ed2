#pragma once
// One rank of a HiCache prefetch script (prefetch_script.h) on a real data plane: its host
// pages, its storage with every aborted request's read held by a gate until the rank waits
// for it, and its host page ledger; and the rank's part of the script, run by its owner
// thread with the production prefetch_abort_coordinator (core/prefetch_abort.h), exactly as
// the simulator's prefetch_world schedules it (register, start the storage read, then release
// the aborted request or complete it). The same rank runs as a host thread beside its peers
// (the group in one process: rank_group.h) or as a process of its own (its peers over the
// control plane: wire_group.h, prefetch_processes.h).
//
// Checks: I6 from the host page ledger (a host page freed twice, or freed while its storage
// read is still held in flight: H2) as the coordinator's events arrive, and I7 on the host
// pages' bytes once every read has landed. I5 is the group's (a collective_divergence out of
// the coordinator's collective call, recorded as a finding where the rank stops).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ports.h"
#include "core/variant.h"
#include "real_backend/data_plane.h"
#include "real_backend/scripts/real_outcome.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

class prefetch_rank {
 public:
  // Builds the rank's pieces on `plane` (slot `rank`); findings go to `findings`.
  prefetch_rank(const scenarios::scenario_spec& spec, core::rank_id rank, data_plane& plane,
                finding_log& findings);
  ~prefetch_rank();
  prefetch_rank(const prefetch_rank&) = delete;
  prefetch_rank& operator=(const prefetch_rank&) = delete;

  // The rank's part of the script, on the calling thread, which becomes its coordinator's
  // owner: the coordinator is built, bound, driven and destroyed here. A divergence of the
  // group is recorded as its finding and ends the rank's part; any other failure is thrown.
  void run(core::variant v, core::collective& group, core::event_sink& sink);
  // The coordinator's event, inside the event log's emit (serialised): the rank's host page
  // decisions, checked (events of other ranks are not this rank's business).
  void observe(const core::event& e);
  // After run: every gate opened, every read landed, then I7 on the host pages' bytes.
  void settle_and_check();

  core::rank_id rank() const { return rank_; }
  std::uint32_t host_page_frees() const;

 private:
  class opened_by_poll;
  const scenarios::scenario_spec& spec_;
  core::rank_id rank_;
  finding_log& findings_;
  struct parts;
  std::unique_ptr<parts> parts_;
};

}  // namespace kvsim::real
