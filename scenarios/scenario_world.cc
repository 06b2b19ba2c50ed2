#include "scenarios/scenario_world.h"

#include "scenarios/prefetch_world.h"
#include "spec/scenario_names.h"
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
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (spec.faults.on(row.kind)) mask |= bit(row.kind);
  }
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
