#include "spec/scenario_generator.h"

#include <string>

#include "spec/scenario_draw.h"
#include "spec/rng.h"

namespace kvsim::scenarios {
namespace {

// Separates the scenario's stream from the run's (both start from the seed).
constexpr std::uint64_t scenario_stream = 0x5ce7a210'9e3779b9ULL;

class seeded_draw {
 public:
  explicit seeded_draw(std::uint64_t seed) : rng_(seed ^ scenario_stream) {}
  std::uint32_t in(std::uint32_t low, std::uint32_t high) { return low + rng_.below(high - low + 1); }
  bool coin() { return rng_.below(2) == 1; }
  bool one_in(std::uint32_t n) { return rng_.below(n) == 0; }

 private:
  spec::rng rng_;
};

}  // namespace

scenario_spec generate_scenario(std::uint64_t seed) {
  seeded_draw d(seed);
  scenario_spec s = drawing::draw_scenario(d);
  s.name = generated_scenario_name;
  s.description = "drawn by kvsim explore --generate from seed " + std::to_string(seed);
  return s;
}

}  // namespace kvsim::scenarios
