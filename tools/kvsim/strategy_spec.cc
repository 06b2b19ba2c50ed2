#include "tools/kvsim/strategy_spec.h"

#include "sim/search/pct.h"
#include "sim/search/random_walk.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {
namespace {

// PCT spreads its d-1 priority change points over the first steps of a run; the catalogue's
// runs take 20 to 200 schedule steps, so change points land inside them.
constexpr std::uint64_t pct_steps_estimate = 100;
constexpr std::uint32_t pct_depth_max = 16;

const std::string accepted = "random, pct:D (D from 1 to 16), dpor or dpor:P";

}  // namespace

std::string strategy_spec::text() const {
  switch (family) {
    case strategy_family::random:
      return "random";
    case strategy_family::pct:
      return "pct:" + std::to_string(pct_depth);
    case strategy_family::dpor:
      return preemption_bound ? "dpor:" + std::to_string(*preemption_bound) : "dpor";
  }
  return "random";
}

std::unique_ptr<sim::strategy> strategy_spec::make(std::uint64_t seed) const {
  if (family == strategy_family::pct) {
    return std::make_unique<sim::pct>(seed, pct_depth, pct_steps_estimate);
  }
  return std::make_unique<sim::random_walk>(seed);
}

strategy_spec parse_strategy(const std::string& text) {
  strategy_spec spec;
  if (text == "random") return spec;
  if (text == "dpor") {
    spec.family = strategy_family::dpor;
    return spec;
  }
  const auto colon = text.find(':');
  const std::string family = text.substr(0, colon);
  if (family == "dfs") {
    // The sleep-set search it was is dpor's reference mode; dpor covers the same
    // interleavings, with the same preemption bound, in fewer runs.
    throw usage_error("strategy '" + text + "' is retired: use dpor or dpor:P, which exhausts the same " +
                      "interleavings (within the same preemption bound) in fewer runs");
  }
  if (colon == std::string::npos || (family != "pct" && family != "dpor")) {
    throw usage_error("unknown strategy '" + text + "' (" + accepted + ")");
  }
  const std::string number = text.substr(colon + 1);
  if (family == "pct") {
    spec.family = strategy_family::pct;
    const std::uint64_t depth = parse_unsigned(number, "the PCT depth in '" + text + "'");
    if (depth < 1 || depth > pct_depth_max) {
      throw usage_error("the PCT depth in '" + text + "' must be from 1 to 16");
    }
    spec.pct_depth = static_cast<std::uint32_t>(depth);
    return spec;
  }
  spec.family = strategy_family::dpor;
  const std::uint64_t bound = parse_unsigned(number, "the preemption bound in '" + text + "'");
  if (bound > 1000) throw usage_error("the preemption bound in '" + text + "' is above 1000");
  spec.preemption_bound = static_cast<std::uint32_t>(bound);
  return spec;
}

}  // namespace kvsim::tools
