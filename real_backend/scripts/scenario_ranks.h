#pragma once
// How many ranks a catalogue scenario runs on: a transfer script's two (its prefill and its
// decode rank), a HiCache script's attention group.
#include <cstdint>

#include "spec/scenario_spec.h"

namespace kvsim::real {

inline std::uint32_t ranks_of(const scenarios::scenario_spec& spec) {
  return spec.kind == scenarios::scenario_kind::transfer ? 2 : spec.topology.attention_group;
}

}  // namespace kvsim::real
