#pragma once
// The names the catalogue uses for the enums of scenario_spec.h, in enum order: one table
// read by the parser and written by to_json and to_string, so the two cannot drift apart.
#include <array>
#include <string_view>

#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

const char* to_string(abort_origin origin);

namespace detail {

inline constexpr std::array<const char*, 2> kind_names{"transfer", "prefetch"};
inline constexpr std::array<const char*, 6> abort_phase_names{
    "before_open", "before_transfer", "during_transfer", "after_transfer", "anytime", "before_admission"};
inline constexpr std::array<const char*, 2> origin_names{"decode", "prefill"};
inline constexpr std::array<const char*, 3> prefetch_state_names{"missing", "pending", "active"};
inline constexpr std::array<const char*, 2> allocation_names{"lifo", "fifo"};
inline constexpr std::array<const char*, 2> link_keying_names{"per_life", "per_pair"};
inline constexpr std::array<const char*, 3> preemption_names{"none", "recompute", "offload"};
inline constexpr std::array<const char*, 2> pool_full_names{"wait", "fail"};

// "I1".."I9": the invariants of DOMAIN.md.
inline constexpr std::array<const char*, 9> invariant_names{"I1", "I2", "I3", "I4", "I5",
                                                            "I6", "I7", "I8", "I9"};

// The breaking variant of a scenario whose core is deliberately broken (must always fail).
inline constexpr std::string_view canary_variant = "canary";

const char* to_string(core::prefetch_state state);
const char* to_string(core::allocation_order order);
const char* to_string(link_keying keying);

}  // namespace detail
}  // namespace kvsim::scenarios
