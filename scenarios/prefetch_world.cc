#include "scenarios/prefetch_world.h"

#include <deque>
#include <vector>

#include "core/prefetch_abort.h"
#include "spec/scenario_names.h"
#include "sim/host_page_pool.h"
#include "sim/kv_memory.h"
#include "sim/sim_collective.h"
#include "sim/sim_events.h"
#include "sim/sim_storage.h"
#include "sim/wait_queue.h"

namespace kvsim::scenarios {
namespace {

constexpr std::uint64_t begin_or_end_tag = 0xbe9;
constexpr std::uint64_t moment_tag = 0x30e7;

}  // namespace

struct prefetch_world::parts {
  struct rank_parts {
    rank_parts(parts& p, core::rank_id rank)
        : host(p.world, rank, p.spec.topology.pages_per_rank, p.spec.topology.page_bytes),
          pool(p.spec.topology.pages_per_rank),
          storage(p.world, rank, host),
          coordinator(rank, {p.group.member(rank), storage, p.pool_tap}, p.variant),
          pages_freed(p.world, "free host pages of rank " + std::to_string(rank)) {}
    sim::kv_memory host;
    sim::host_page_pool pool;
    sim::sim_storage storage;
    core::prefetch_abort_coordinator coordinator;
    std::map<std::size_t, std::vector<core::page_index>> pages_of;  // per request begun
    std::size_t ended = 0;  // requests end in order: those below this index have ended
    // Host pages came back to this rank's pool. One queue per rank, as each rank waits only
    // for its own pool: frees on two ranks stay independent steps (sim/step_log.h).
    sim::wait_queue pages_freed;
  };

  // The core's events go to the world's log; a host page free the core decides is applied
  // to the rank's pool as it is made (the event is the call, as SGLang's mem_pool_host.free).
  class host_pool_tap final : public core::event_sink {
   public:
    explicit host_pool_tap(parts& p) : parts_(p) {}
    void emit(const core::event& e) override {
      parts_.world.core_sink().emit(e);
      if (const auto* freed = std::get_if<core::host_pages_freed>(&e.body)) {
        rank_parts& rank = *parts_.ranks.at(e.rank);
        rank.pool.free(freed->pages);
        rank.pages_freed.notify_all();
      }
    }

   private:
    parts& parts_;
  };

  parts(const scenario_spec& s, core::variant v, sim::strategy& chooser,
        const sim::fault_profile& faults, sim::fiber_stacks* stack_pool)
      : spec(s),
        variant(v),
        world(chooser, sim::world_config{.step_limit = s.step_limit,
                                         .faults = faults,
                                         .stack_pool = stack_pool}),
        group(world, 0, members_of(s)),
        pool_tap(*this) {
    std::map<core::room_id, core::generation_t> generations;
    for (const request_spec& r : spec.requests) keys.push_back({r.room, generations[r.room]++});
    for (core::rank_id rank : group.members()) {
      ranks.emplace(rank, std::make_unique<rank_parts>(*this, rank));
      world.spawn({rank, "scheduler", 0}, [this, rank] { scheduler(rank); });
    }
    // Once every actor returned, each coordinator is read through its own accessor: an entry
    // it still keeps (whatever its events said) is a leak the leak checker reports (I8).
    world.add_quiescence_audit([this] {
      for (const auto& [rank, part] : ranks) {
        sim::core_audited audit{rank, "prefetch_abort_coordinator", {}};
        for (const core::room_key& key : keys) {
          const core::prefetch_state state = part->coordinator.local_state(key);
          if (state == core::prefetch_state::missing) continue;
          audit.held.push_back(core::to_string(key) + ": prefetch entry still kept (" +
                               detail::to_string(state) + ")");
        }
        world.emit(std::move(audit));
      }
    });
  }

  static std::vector<core::rank_id> members_of(const scenario_spec& s) {
    std::vector<core::rank_id> members;
    for (core::rank_id rank = 0; rank < s.topology.attention_group; ++rank) members.push_back(rank);
    return members;
  }

  core::prefetch_state state_of(core::rank_id rank) const {
    return spec.faults.prefetch_states.at(rank);
  }

  // Request `r` may begin once the request it comes `after` has ended on this rank and, when
  // its prefetch is active here, enough host pages are free.
  bool can_begin(core::rank_id rank, std::size_t r) {
    const rank_parts& me = *ranks.at(rank);
    if (spec.requests[r].after && me.ended <= *spec.requests[r].after) return false;
    return state_of(rank) != core::prefetch_state::active ||
           me.pool.free_pages() >= spec.requests[r].pages;
  }

  void begin(core::rank_id rank, std::size_t r) {
    rank_parts& me = *ranks.at(rank);
    const core::room_key key = keys[r];
    switch (state_of(rank)) {
      case core::prefetch_state::missing:
        return;
      case core::prefetch_state::pending:  // registered, no host pages yet (SGLang: none)
        me.coordinator.register_pending(key, {});
        return;
      case core::prefetch_state::active: {
        const std::vector<core::page_index> pages = *me.pool.allocate(spec.requests[r].pages);
        me.pages_of[r] = pages;
        me.coordinator.register_pending(key, pages);
        me.coordinator.start_io(key);
        return;
      }
    }
  }

  // The abort or completion lands after a number of the read's pages the search draws (any
  // of 0 .. all), then one more scheduling step: before, during or after the read.
  void end(core::rank_id rank, std::size_t r) {
    rank_parts& me = *ranks.at(rank);
    const core::room_key key = keys[r];
    if (me.pages_of.contains(r)) {
      me.storage.wait_progress(key, world.choose(moment_tag, spec.requests[r].pages + 1));
    }
    world.step();
    if (spec.requests[r].abort) {
      me.coordinator.release_aborted_request(key);
    } else {
      me.coordinator.complete(key);
      verify(rank, r);
    }
    ++me.ended;
  }

  // A completed prefetch's host pages must hold its own bytes (I7), read in the step the
  // completion is decided in, so nothing can move in between: this is what the scheduler
  // hands on (in SGLang, into the radix tree).
  void verify(core::rank_id rank, std::size_t r) {
    rank_parts& me = *ranks.at(rank);
    const auto pages = me.pages_of.find(r);
    if (pages == me.pages_of.end()) return;
    if (me.storage.state_of(keys[r]) != core::storage_poll::completed) return;
    for (std::uint32_t j = 0; j < pages->second.size(); ++j) {
      me.host.verify(pages->second[j], keys[r], j);
    }
  }

  void scheduler(core::rank_id rank) {
    std::deque<std::size_t> begun;  // begun, not yet ended, in request order
    std::size_t next = 0;
    while (next < spec.requests.size() || !begun.empty()) {
      world.step();
      const bool may_begin = next < spec.requests.size() && can_begin(rank, next);
      if (may_begin && (begun.empty() || world.choose(begin_or_end_tag, 2) == 0)) {
        begin(rank, next);
        begun.push_back(next++);
      } else if (!begun.empty()) {
        end(rank, begun.front());
        begun.pop_front();
      } else {
        // The next request needs more host pages than are free, and this rank holds none
        // that will come back: only a leak gets here (a hang, I5).
        ranks.at(rank)->pages_freed.wait();
      }
    }
  }

  const scenario_spec& spec;  // the caller keeps it alive (scenario_world.h)
  core::variant variant;
  sim::world world;
  sim::collective_group group;
  host_pool_tap pool_tap;
  std::vector<core::room_key> keys;
  std::map<core::rank_id, std::unique_ptr<rank_parts>> ranks;
};

prefetch_world::prefetch_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                               const sim::fault_profile& faults, sim::fiber_stacks* stack_pool)
    : parts_(std::make_unique<parts>(spec, v, chooser, faults, stack_pool)) {}

prefetch_world::~prefetch_world() = default;

sim::world& prefetch_world::world() { return parts_->world; }

prefetch_tally tally_prefetch(const sim::world& w) {
  prefetch_tally tally;
  for (const sim::sim_event& e : w.events()) {
    if (const auto* entered = std::get_if<sim::collective_entered>(&e.body)) {
      if (entered->op == sim::collective_op::barrier) ++tally.barrier_entries[entered->rank];
    }
    if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
      if (std::holds_alternative<core::host_pages_freed>(decided->what.body)) {
        ++tally.host_page_frees[decided->what.rank];
      }
    }
  }
  return tally;
}

}  // namespace kvsim::scenarios
