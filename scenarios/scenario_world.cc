#include "scenarios/scenario_world.h"

#include "scenarios/prefetch_world.h"
#include "scenarios/scenario_names.h"
#include "scenarios/transfer_world.h"
#include "sim/fault_profile.h"

namespace kvsim::scenarios {
namespace {

std::uint32_t bit(sim::fault_kind kind) { return 1u << static_cast<unsigned>(kind); }

}  // namespace

std::unique_ptr<scenario_world> make_scenario_world(const scenario_spec& spec, core::variant v,
                                                    sim::strategy& chooser, std::uint64_t seed,
                                                    sim::fiber_stacks* stack_pool) {
  return make_scenario_world(spec, v, chooser, sim::fault_profile::draw(seed, allowed_faults(spec)),
                             stack_pool);
}

std::unique_ptr<scenario_world> make_scenario_world(const scenario_spec& spec, core::variant v,
                                                    sim::strategy& chooser,
                                                    const sim::fault_profile& faults,
                                                    sim::fiber_stacks* stack_pool) {
  if (spec.kind == scenario_kind::prefetch) {
    return std::make_unique<prefetch_world>(spec, v, chooser, faults, stack_pool);
  }
  return std::make_unique<transfer_world>(spec, v, chooser, faults, stack_pool);
}

std::uint32_t allowed_faults(const scenario_spec& spec) {
  std::uint32_t mask = 0;
  for (const request_spec& r : spec.requests) {
    // A prefetch scenario's abort is scripted (every rank cleans up), never drawn.
    if (r.abort && spec.kind == scenario_kind::transfer) mask |= bit(sim::fault_kind::abort);
  }
  const fault_spec& f = spec.faults;
  if (f.transfer_stall) mask |= bit(sim::fault_kind::transfer_stall);
  if (f.transfer_fail) mask |= bit(sim::fault_kind::transfer_fail);
  if (f.transfer_timeout_unconfirmed) mask |= bit(sim::fault_kind::transfer_timeout_unconfirmed);
  if (f.message_delay) mask |= bit(sim::fault_kind::message_delay);
  if (f.message_duplicate) mask |= bit(sim::fault_kind::message_duplicate);
  if (f.message_drop) mask |= bit(sim::fault_kind::message_drop);
  if (f.message_replay) mask |= bit(sim::fault_kind::message_replay);
  if (f.message_forge) mask |= bit(sim::fault_kind::message_forge);
  if (f.peer_death) mask |= bit(sim::fault_kind::peer_death);
  if (f.ledger_misuse) mask |= bit(sim::fault_kind::ledger_misuse);
  if (f.late_status) mask |= bit(sim::fault_kind::late_status);
  return mask;
}

sim::fault_profile faults_as_choices(const scenario_spec& spec) {
  sim::fault_profile profile;
  const std::uint32_t allowed = allowed_faults(spec);
  for (std::size_t i = 0; i < sim::fault_kind_count; ++i) {
    if (((allowed >> i) & 1u) != 0) profile.per_million[i] = 1'000'000;
  }
  return profile;
}

std::optional<core::variant> variant_from_name(std::string_view name) {
  if (name == detail::canary_variant) return core::variant::with(core::bug::b1_destination_reuse);
  return core::variant::from_name(name);
}

core::variant breaking_variant(const expectation_spec& expect) {
  const auto named = variant_from_name(expect.breaking_variant);
  return named ? *named : core::variant::safe();
}

core::variant breaking_variant(const scenario_spec& spec) { return breaking_variant(spec.expect); }

}  // namespace kvsim::scenarios
