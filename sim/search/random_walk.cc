#include "sim/search/random_walk.h"

namespace kvsim::sim {

std::uint32_t random_walk::choose(const decision_request& request) {
  if (request.kind == decision_kind::fault) {
    return random_.chance(request.fault_per_million) ? 1u : 0u;
  }
  return random_.below(request.options);
}

}  // namespace kvsim::sim
