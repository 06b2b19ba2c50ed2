#include "scenarios/prefetch_world.h"

#include <vector>

#include "core/prefetch_abort.h"
#include "sim/sim_collective.h"
#include "sim/sim_events.h"
#include "sim/sim_storage.h"

namespace kvsim::scenarios {

struct prefetch_world::parts {
  struct rank_parts {
    rank_parts(parts& p, core::rank_id rank)
        : storage(p.world, rank),
          coordinator(rank, {p.group.member(rank), storage, p.world.core_sink()}, p.variant) {}
    sim::sim_storage storage;
    core::prefetch_abort_coordinator coordinator;
  };

  parts(const scenario_spec& s, core::variant v, sim::strategy& chooser,
        const sim::fault_profile& faults)
      : spec(s),
        variant(v),
        world(chooser, sim::world_config{s.step_limit, 256 * 1024,
                                         faults}),
        group(world, 0, members_of(s)) {
    std::map<core::room_id, core::generation_t> generations;
    for (const request_spec& r : spec.requests) keys.push_back({r.room, generations[r.room]++});
    for (core::rank_id rank : group.members()) {
      ranks.emplace(rank, std::make_unique<rank_parts>(*this, rank));
      world.spawn({rank, "scheduler", 0}, [this, rank] { scheduler(rank); });
    }
  }

  static std::vector<core::rank_id> members_of(const scenario_spec& s) {
    std::vector<core::rank_id> members;
    for (core::rank_id rank = 0; rank < s.topology.attention_group; ++rank) members.push_back(rank);
    return members;
  }

  // Host pages of request `r`: consecutive, wrapping in the rank's pool. Requests on a rank
  // run one after another, so a page is reused only after its earlier owner freed it.
  std::vector<core::page_index> host_pages(std::size_t r) const {
    std::vector<core::page_index> pages;
    const std::uint32_t pool = spec.topology.pages_per_rank;
    for (std::uint32_t j = 0; j < spec.requests[r].pages; ++j) {
      pages.push_back(static_cast<core::page_index>((r * spec.requests[r].pages + j) % pool));
    }
    return pages;
  }

  void scheduler(core::rank_id rank) {
    core::prefetch_abort_coordinator& me = ranks.at(rank)->coordinator;
    const core::prefetch_state state = spec.faults.prefetch_states.at(rank);
    for (std::size_t r = 0; r < spec.requests.size(); ++r) {
      const core::room_key key = keys[r];
      if (state != core::prefetch_state::missing) me.register_pending(key, host_pages(r));
      if (state == core::prefetch_state::active) me.start_io(key);
      world.step();  // the abort reaches each rank at its own moment
      if (spec.requests[r].abort) {
        me.release_aborted_request(key);
      } else {
        me.complete(key);
      }
    }
  }

  scenario_spec spec;
  core::variant variant;
  sim::world world;
  sim::collective_group group;
  std::vector<core::room_key> keys;
  std::map<core::rank_id, std::unique_ptr<rank_parts>> ranks;
};

prefetch_world::prefetch_world(const scenario_spec& spec, core::variant v, sim::strategy& chooser,
                               const sim::fault_profile& faults)
    : parts_(std::make_unique<parts>(spec, v, chooser, faults)) {}

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
