#include "real_backend/prefetch_script.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include "core/prefetch_abort.h"
#include "real_backend/errors.h"
#include "real_backend/event_log.h"
#include "real_backend/host_page_ledger.h"
#include "real_backend/rank_group.h"
#include "real_backend/thread_identity.h"

namespace kvsim::real {
namespace {

using core::rank_id;
using core::room_key;

// The rank's storage as the coordinator sees it. A held read stays in flight until someone
// waits for it: its gate opens at the first poll (the drain of the fixed protocol), so a
// rank that frees host pages without draining (H2) frees them while the read certainly has
// not landed, and the test is deterministic.
class opened_by_poll final : public core::storage_io {
 public:
  explicit opened_by_poll(gated_storage& storage) : storage_(storage) {}
  void hold(room_key owner, hold_gate& gate) {
    storage_.hold(owner, gate);
    gates_[owner] = &gate;
  }
  core::storage_handle read_pages(room_key owner,
                                  const std::vector<core::page_index>& host_pages) override {
    const core::storage_handle handle = storage_.read_pages(owner, host_pages);
    owners_[handle] = owner;
    return handle;
  }
  core::storage_poll poll(core::storage_handle handle) override {
    open_gate_of(handle);
    return storage_.poll(handle);
  }
  core::storage_poll wait(core::storage_handle handle) override {
    open_gate_of(handle);
    return storage_.wait(handle);
  }
  // True while a held read of `owner` has not been released (no page of it has landed).
  bool held(room_key owner) const {
    const auto gate = gates_.find(owner);
    return gate != gates_.end() && !gate->second->is_open();
  }

 private:
  gated_storage& storage_;
  std::map<room_key, hold_gate*> gates_;
  std::map<core::storage_handle, room_key> owners_;

  // A held read is released by the first one to wait for it (the drain).
  void open_gate_of(core::storage_handle handle) {
    if (const auto owner = owners_.find(handle); owner != owners_.end()) {
      if (const auto gate = gates_.find(owner->second); gate != gates_.end()) gate->second->open();
    }
  }
};

class prefetch_run {
 public:
  prefetch_run(const scenarios::scenario_spec& spec, core::variant v, data_plane& plane,
               const script_options& options)
      : spec_(spec),
        variant_(v),
        group_plane_(plane.make_group_plane(spec.topology.attention_group)),
        group_(0, members(spec), *group_plane_, options.patience) {
    std::map<core::room_id, core::generation_t> generations;
    for (const scenarios::request_spec& r : spec_.requests)
      keys_.push_back({r.room, generations[r.room]++});
    for (rank_id rank = 0; rank < spec_.topology.attention_group; ++rank) {
      auto parts = std::make_unique<rank_parts>(rank);
      parts->host =
          plane.make_host_pages(rank, spec_.topology.pages_per_rank, spec_.topology.page_bytes);
      parts->storage = plane.make_storage(rank, rank, *parts->host);
      parts->polled = std::make_unique<opened_by_poll>(*parts->storage);
      for (std::size_t r = 0; r < keys_.size(); ++r) parts->gates.push_back(plane.make_gate());
      ranks_.push_back(std::move(parts));
    }
    log_.observe([this](const core::event& e) { observe(e); });
    recording_.attach(log_);
  }

  ~prefetch_run() { open_every_gate(); }

  std::vector<recorded_event> recorded() const { return recording_.events(); }

  std::vector<real_finding> run(prefetch_counts* counts) {
    std::vector<std::thread> threads;
    for (rank_id rank = 0; rank < ranks_.size(); ++rank) {
      threads.emplace_back([this, rank] { scheduler(rank); });
    }
    for (std::thread& t : threads) t.join();
    open_every_gate();
    for (auto& parts : ranks_) parts->storage->wait_idle();
    if (!errors_.empty()) throw real_backend_error(errors_.front());
    check_host_bytes();
    if (counts != nullptr) {
      for (rank_id rank = 0; rank < ranks_.size(); ++rank) {
        counts->barrier_entries[rank] = group_.barrier_entries(rank);
        counts->host_page_frees[rank] = ranks_[rank]->ledger.frees();
      }
    }
    return findings_.findings();
  }

 private:
  struct rank_parts {
    explicit rank_parts(rank_id rank) : ledger(rank) {}
    std::vector<std::unique_ptr<hold_gate>> gates;  // per request
    std::unique_ptr<host_page_memory> host;
    std::unique_ptr<gated_storage> storage;
    std::unique_ptr<opened_by_poll> polled;
    host_page_ledger ledger;
  };

  static std::vector<rank_id> members(const scenarios::scenario_spec& spec) {
    std::vector<rank_id> m;
    for (rank_id r = 0; r < spec.topology.attention_group; ++r) m.push_back(r);
    return m;
  }

  // Host pages of request `r`, as the simulator's prefetch_world lays them out.
  std::vector<core::page_index> host_pages(std::size_t r) const {
    std::vector<core::page_index> pages;
    const std::uint32_t pool = spec_.topology.pages_per_rank;
    for (std::uint32_t j = 0; j < spec_.requests[r].pages; ++j) {
      pages.push_back(static_cast<core::page_index>((r * spec_.requests[r].pages + j) % pool));
    }
    return pages;
  }

  // The rank's owner thread (core/owner_thread.h): it builds the rank's coordinator, binds
  // it to itself and alone calls it; the coordinator is gone before the thread returns.
  void scheduler(rank_id rank) {
    rank_parts& me = *ranks_[rank];
    const core::prefetch_state state = spec_.faults.prefetch_states.at(rank);
    try {
      core::prefetch_abort_coordinator coordinator(
          rank, core::prefetch_ports{group_.member(rank), *me.polled, log_}, variant_);
      coordinator.bind_owner(host_threads());
      for (std::size_t r = 0; r < keys_.size(); ++r) {
        const room_key key = keys_[r];
        const bool aborted = spec_.requests[r].abort.has_value();
        if (state != core::prefetch_state::missing)
          coordinator.register_pending(key, host_pages(r));
        if (state == core::prefetch_state::active) {
          // An aborted request's read stays in flight until the abort drains it.
          if (aborted) me.polled->hold(key, *me.gates[r]);
          coordinator.start_io(key);
        }
        if (aborted) {
          coordinator.release_aborted_request(key);
        } else {
          coordinator.complete(key);
        }
      }
    } catch (const collective_divergence& d) {
      findings_.add(d.what());
    } catch (const std::exception& e) {
      const std::lock_guard lock(errors_mutex_);
      errors_.push_back("rank " + std::to_string(rank) + ": " + e.what());
    }
    group_.member_finished(rank);
  }

  // Inside event_log::emit (serialised): apply host page decisions; a free while the rank's
  // storage read of those pages is still held (in flight) is H2's hazard, seen before the
  // read lands in the freed pages.
  void observe(const core::event& e) {
    if (const auto* allocated = std::get_if<core::host_pages_allocated>(&e.body)) {
      for (const std::string& line : ranks_.at(e.rank)->ledger.allocated(*allocated))
        findings_.add(line);
    } else if (const auto* freed = std::get_if<core::host_pages_freed>(&e.body)) {
      for (const std::string& line : ranks_.at(e.rank)->ledger.freed(*freed)) findings_.add(line);
      if (ranks_.at(e.rank)->polled->held(freed->key)) {
        findings_.add(std::string("I6: the ") + core::to_string(freed->by) + " freed host pages " +
                      core::pages_text(freed->pages) + " of " + core::to_string(freed->key) +
                      " on rank " + std::to_string(e.rank) +
                      " while its storage read was still in flight: the read lands in freed "
                      "pages");
      }
    }
  }

  void open_every_gate() {
    for (auto& parts : ranks_) {
      for (auto& g : parts->gates) g->open();
    }
  }

  // Every active rank's host pages hold what its storage read brought (the last read into
  // each page, if requests share pages).
  void check_host_bytes() {
    for (rank_id rank = 0; rank < ranks_.size(); ++rank) {
      if (spec_.faults.prefetch_states.at(rank) != core::prefetch_state::active) continue;
      const host_page_memory& host = *ranks_[rank]->host;
      std::set<core::page_index> checked;
      for (std::size_t r = keys_.size(); r-- > 0;) {
        const std::vector<core::page_index> pages = host_pages(r);
        for (std::uint32_t j = 0; j < pages.size(); ++j) {
          if (!checked.insert(pages[j]).second) continue;
          const canary_identity want{keys_[r].room, keys_[r].generation, j};
          if (matches_canary_host(host.page(pages[j]), host.page_bytes(), want)) continue;
          const auto found = owner_of_bytes_host(host.page(pages[j]), host.page_bytes());
          findings_.add("I7: host page " + std::to_string(pages[j]) + " on rank " +
                        std::to_string(rank) + " does not hold what the storage read of " +
                        core::to_string(keys_[r]) + " brought (logical page " + std::to_string(j) +
                        ") but " +
                        (found ? "the bytes of " +
                                     core::to_string(core::room_key{found->room, found->generation})
                               : std::string("unrecognisable bytes")));
        }
      }
    }
  }

  const scenarios::scenario_spec& spec_;
  core::variant variant_;
  finding_log findings_;
  event_log log_;
  event_recorder recording_;  // the log as kvsim real --trace writes it
  std::unique_ptr<group_plane> group_plane_;
  rank_group group_;
  std::vector<room_key> keys_;
  std::vector<std::unique_ptr<rank_parts>> ranks_;
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
