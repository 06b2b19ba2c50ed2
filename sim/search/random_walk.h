#pragma once
// Seeded random walk: every schedule and data choice uniform, every fault with the
// probability the run's fault profile gives it.
#include "spec/rng.h"
#include "sim/search/strategy.h"

namespace kvsim::sim {

class random_walk final : public strategy {
 public:
  explicit random_walk(std::uint64_t seed) : random_(seed) {}
  std::string name() const override { return "random"; }
  std::uint32_t choose(const decision_request& request) override;
  bool reads_subjects() const override { return false; }

 private:
  spec::rng random_;
};

}  // namespace kvsim::sim
