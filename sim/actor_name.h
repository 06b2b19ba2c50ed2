#pragma once
// Actors are fibers with stable structural names: (rank, role, index), e.g. "r1.decode.0".
// Ids are handed out in spawn order, which is deterministic, and traces name actors by id
// and name both, so a trace survives code changes that do not change who exists.
#include <cstdint>
#include <string>

#include "core/ids.h"
#include "spec/trace_format.h"

namespace kvsim::sim {

using actor_id = std::uint32_t;
inline constexpr actor_id no_actor = 0xffffffffu;

struct actor_name {
  core::rank_id rank = 0;
  std::string role;
  std::uint32_t index = 0;

  friend bool operator==(const actor_name&, const actor_name&) = default;
};

inline std::string to_string(const actor_name& name) {
  return spec::actor_label(name.rank, name.role, name.index);
}

}  // namespace kvsim::sim
