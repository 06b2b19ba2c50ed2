#include "sim/decision_stream.h"

#include "sim/sim_assert.h"

namespace kvsim::sim {

std::uint32_t decision_stream::ask(const decision_request& request) {
  KVSIM_SIM_ASSERT(request.options > 0, "a decision needs at least one option");
  const std::uint32_t chosen = strategy_.choose(request);
  KVSIM_SIM_ASSERT_LT(chosen, request.options, "strategy chose an option that does not exist");
  return chosen;
}

std::uint32_t decision_stream::decide(const decision_request& request) {
  const std::uint32_t chosen = ask(request);
  KVSIM_SIM_ASSERT(request.kind != decision_kind::schedule || request.subjects.size() == request.options,
                   "a schedule decision lists its subjects (decide_counted when it does not)");
  const std::uint64_t subject =
      request.kind == decision_kind::schedule ? request.subjects[chosen] : request.tag;
  decisions_.push_back(decision{request.kind, request.options, chosen, subject});
  return chosen;
}

}  // namespace kvsim::sim
