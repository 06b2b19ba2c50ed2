#pragma once
// The strategy strings of the command line: "random", "pct:D" (PCT with depth D), "dpor" and
// "dpor:P" (exhaustive search with dynamic partial-order reduction, sim/search/dpor.h, with
// preemption bound P). dpor is a search over many runs rather than a per-run strategy, so only
// `explore` takes it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/search/strategy.h"

namespace kvsim::tools {

enum class strategy_family : std::uint8_t { random, pct, dpor };

struct strategy_spec {
  strategy_family family = strategy_family::random;
  std::uint32_t pct_depth = 3;
  std::optional<std::uint32_t> preemption_bound;  // dpor; empty: unbounded

  std::string text() const;  // back to "random", "pct:3", "dpor:2", "dpor"
  // dpor: one search over many runs of one scenario, in one process.
  bool exhaustive() const { return family == strategy_family::dpor; }
  // The strategy for one run from `seed` (random and pct only).
  std::unique_ptr<sim::strategy> make(std::uint64_t seed) const;
};

// Throws usage_error with the accepted forms.
strategy_spec parse_strategy(const std::string& text);

}  // namespace kvsim::tools
