#include "real_backend/scripts/prefetch_script.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "real_backend/errors.h"
#include "real_backend/host/event_log.h"
#include "real_backend/scripts/prefetch_rank.h"
#include "real_backend/nccl/rank_group.h"

namespace kvsim::real {
namespace {

using core::rank_id;

// The group in one process: one host thread per rank (its owner thread), the ranks meeting
// in rank_group's collectives.
class prefetch_run {
 public:
  prefetch_run(const scenarios::scenario_spec& spec, core::variant v, data_plane& plane,
               const script_options& options)
      : variant_(v),
        group_plane_(plane.make_group_plane(spec.topology.attention_group)),
        group_(0, members(spec), *group_plane_, options.patience) {
    for (rank_id rank = 0; rank < spec.topology.attention_group; ++rank) {
      ranks_.push_back(std::make_unique<prefetch_rank>(spec, rank, plane, findings_));
    }
    log_.observe([this](const core::event& e) { ranks_.at(e.rank)->observe(e); });
    recording_.attach(log_);
  }

  std::vector<recorded_event> recorded() const { return recording_.events(); }

  std::vector<real_finding> run(prefetch_counts* counts) {
    std::vector<std::thread> threads;
    for (rank_id rank = 0; rank < ranks_.size(); ++rank) {
      threads.emplace_back([this, rank] { scheduler(rank); });
    }
    for (std::thread& t : threads) t.join();
    for (auto& rank : ranks_) rank->settle_and_check();
    if (!errors_.empty()) throw real_backend_error(errors_.front());
    if (counts != nullptr) {
      for (rank_id rank = 0; rank < ranks_.size(); ++rank) {
        counts->barrier_entries[rank] = group_.barrier_entries(rank);
        counts->host_page_frees[rank] = ranks_[rank]->host_page_frees();
      }
    }
    return findings_.findings();
  }

 private:
  static std::vector<rank_id> members(const scenarios::scenario_spec& spec) {
    std::vector<rank_id> m;
    for (rank_id r = 0; r < spec.topology.attention_group; ++r) m.push_back(r);
    return m;
  }

  void scheduler(rank_id rank) {
    try {
      ranks_[rank]->run(variant_, group_.member(rank), log_);
    } catch (const std::exception& e) {
      const std::lock_guard lock(errors_mutex_);
      errors_.push_back("rank " + std::to_string(rank) + ": " + e.what());
    }
    group_.member_finished(rank);
  }

  core::variant variant_;
  finding_log findings_;
  event_log log_;
  event_recorder recording_;  // the log as kvsim real --trace writes it
  std::unique_ptr<group_plane> group_plane_;
  rank_group group_;
  std::vector<std::unique_ptr<prefetch_rank>> ranks_;
  std::mutex errors_mutex_;
  std::vector<std::string> errors_;
};

}  // namespace

real_outcome run_prefetch_script(const scenarios::scenario_spec& spec, core::variant v,
                                 const std::string& variant_name, data_plane& plane,
                                 const script_options& options, prefetch_counts* counts) {
  const std::uint32_t group = spec.topology.attention_group;
  real_outcome outcome;
  outcome.scenario = spec.name;
  outcome.variant = variant_name;
  outcome.backend = plane.name();
  outcome.devices = std::min(plane.devices(), group);
  outcome.simulated_peers = plane.devices() < group;
  for (rank_id rank = 0; rank < group; ++rank) {
    outcome.notes.push_back("rank " + std::to_string(rank) + " (" +
                            core::to_string(spec.faults.prefetch_states.at(rank)) + ") on " +
                            plane.device_of(rank) +
                            ", on a host thread of its own that builds, binds and alone calls "
                            "its coordinator");
  }
  prefetch_run run(spec, v, plane, options);
  outcome.notes.push_back(
      outcome.simulated_peers
          ? "collectives: the " + std::to_string(group) +
                " ranks share one device (peers simulated by host threads); the host combines "
                "their values and the agreed value passes through a one-rank " +
                (plane.name() == "cuda" ? "NCCL communicator" : "device plane")
          : "collectives: one NCCL rank per device across " + std::to_string(group) + " devices");
  outcome.findings = run.run(counts);
  outcome.events = run.recorded();
  return outcome;
}

}  // namespace kvsim::real
