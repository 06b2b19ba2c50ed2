#include "spec/scenario_names.h"

#include <cstddef>

namespace kvsim::scenarios {
namespace {

static_assert(static_cast<std::size_t>(scenario_kind::prefetch) + 1 == detail::kind_names.size());
static_assert(static_cast<std::size_t>(abort_phase::before_admission) + 1 ==
              detail::abort_phase_names.size());
static_assert(static_cast<std::size_t>(abort_origin::prefill) + 1 == detail::origin_names.size());
static_assert(static_cast<std::size_t>(core::prefetch_state::active) + 1 ==
              detail::prefetch_state_names.size());
static_assert(static_cast<std::size_t>(core::allocation_order::fifo) + 1 ==
              detail::allocation_names.size());
static_assert(static_cast<std::size_t>(link_keying::per_pair) + 1 ==
              detail::link_keying_names.size());

template <std::size_t N, class E>
const char* name_in(const std::array<const char*, N>& names, E value) {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : "unknown";
}

}  // namespace

std::vector<expectation_spec> breaking_expectations(const scenario_spec& spec) {
  std::vector<expectation_spec> all{spec.expect};
  all.insert(all.end(), spec.also_expect.begin(), spec.also_expect.end());
  return all;
}

const char* to_string(scenario_kind kind) { return name_in(detail::kind_names, kind); }
const char* to_string(abort_phase phase) { return name_in(detail::abort_phase_names, phase); }
const char* to_string(preemption_mode mode) { return name_in(detail::preemption_names, mode); }
const char* to_string(pool_full_policy policy) { return name_in(detail::pool_full_names, policy); }
const char* to_string(abort_origin origin) { return name_in(detail::origin_names, origin); }

namespace detail {
const char* to_string(core::prefetch_state state) {
  return name_in(prefetch_state_names, state);
}
const char* to_string(core::allocation_order order) { return name_in(allocation_names, order); }
const char* to_string(link_keying keying) { return name_in(link_keying_names, keying); }
}  // namespace detail

}  // namespace kvsim::scenarios
