#pragma once
// The fixed schedule: every decision takes option 0, so the runnable actor with the lowest
// id goes next and no injected fault fires. Scripted tests use it when the scenario's shape
// (its states, gates and aborts), not an interleaving, is what makes the outcome.
#include "sim/search/strategy.h"

namespace kvsim::sim {

class first_choice final : public strategy {
 public:
  std::string name() const override { return "first"; }
  std::uint32_t choose(const decision_request& /*request*/) override { return 0; }
};

}  // namespace kvsim::sim
