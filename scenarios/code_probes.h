#pragma once
// Code probes: named points that mark a defensive mechanism of the safe core firing, or a
// dangerous window being entered (FoundationDB's CODE_PROBE, Coyote's coverage report). A
// green search means something only if it went where the bugs live: a search that never
// deferred a release, never refused a forged token and never aborted mid-copy says nothing
// about the code that handles those. `kvsim explore` reports per search how often each probe
// was hit, and a catalogue scenario's safe row whose declared probes (`expect_probes`) were
// not all hit is `unexercised`, not clean.
//
// Probes are read from the run's events, never by the core calling the simulator: the core
// stays unaware of being observed, exactly as in production.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "spec/probe_names.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {

using probe_hits = std::array<std::uint64_t, probe_count>;

// Counts the probes of one run as its events go by (observe, in order), or at once
// (count_probes). The roles of ranks are learnt from the events themselves: a rank that
// issued an abort token is a decode rank, so a duplicate token it refuses is an ACK.
class probe_counter {
 public:
  void observe(const sim::sim_event& e);
  const probe_hits& hits() const { return hits_; }

 private:
  struct copy_progress {
    core::room_key owner;
    std::size_t pages = 0;
    std::size_t copied = 0;
  };
  void hit(probe p) { ++hits_[static_cast<std::size_t>(p)]; }
  void observe_core(const core::event& e);
  void observe_batching(const core::event& e);
  void token_refused(core::rank_id rank, const core::token_rejected& t);
  bool copy_half_done(const core::room_key& key) const;

  probe_hits hits_{};
  std::set<core::rank_id> token_issuers_;
  std::map<sim::transfer_id, copy_progress> copies_;  // submitted, not yet ended
  std::set<std::pair<core::rank_id, core::room_key>> chunks_admitted_;
  std::set<std::pair<core::rank_id, core::room_key>> rooms_opened_;
  std::set<std::pair<core::rank_id, core::room_key>> deadline_quarantined_;
  std::map<std::pair<core::rank_id, core::lease_id>, core::lease_role> lease_roles_;
  std::set<core::rank_id> drained_before_barrier_;  // drained an active read, barrier pending
  std::set<std::pair<core::rank_id, core::room_key>> reads_cut_short_;
  std::set<std::pair<core::rank_id, core::room_key>> refused_pages_;  // waiting for a pool
  // Requests that stopped running while a store job still read their pages.
  std::set<std::pair<core::rank_id, core::room_key>> stored_after_end_;
  std::map<core::rank_id, std::set<core::room_key>> rooms_open_;      // opened, not finished
};

probe_hits count_probes(const std::vector<sim::sim_event>& events);

}  // namespace kvsim::scenarios
