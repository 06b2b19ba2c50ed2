#include "tools/kvsim/sim_demo.h"

#include <optional>

#include "properties/leak_checker.h"
#include "properties/use_after_free_checker.h"
#include "scenarios/two_rank_abort.h"
#include "sim/random_walk.h"

namespace kvsim::tools {
namespace {

constexpr std::uint64_t runs_per_search = 1000;

struct search_result {
  std::uint64_t runs = 0;
  std::optional<std::uint64_t> seed;
  std::optional<sim::finding> found;
  sim::fault_profile faults;
  std::uint64_t steps = 0;
};

search_result search(const scenarios::two_rank_options& options) {
  search_result result;
  for (std::uint64_t seed = 1; seed <= runs_per_search; ++seed) {
    sim::random_walk chooser(seed);
    scenarios::two_rank_abort_world w(chooser, seed, options);
    properties::use_after_free_checker use_after_free;
    properties::leak_checker leaks;
    w.world().add_checker(use_after_free);
    w.world().add_checker(leaks);
    const sim::run_outcome outcome = w.run();
    ++result.runs;
    if (w.world().found()) {
      result.seed = seed;
      result.found = w.world().found();
      result.faults = w.world().faults();
      result.steps = outcome.steps;
      break;
    }
  }
  return result;
}

}  // namespace

int run_sim_demo(std::ostream& out) {
  out << "kvsim demo: random search on the two-rank test world (prefill r0, decode r1; A's\n"
      << "transfer, an abort, B reusing room 7), up to " << runs_per_search << " seeds each\n\n";
  scenarios::two_rank_options planted;
  planted.release_before_drain = true;
  const search_result red = search(planted);
  out << "decode releases on abort, before prefill's drain-ACK (historical):\n";
  if (red.found) {
    out << "  found after " << red.runs << " run(s): seed " << *red.seed << " (faults: "
        << red.faults.describe() << "), " << red.steps << " steps\n  " << red.found->message
        << "\n\n";
  } else {
    out << "  NOT found in " << red.runs << " runs\n\n";
  }
  const search_result green = search({});
  out << "decode releases after the drain-ACK (production):\n";
  if (green.found) {
    out << "  UNEXPECTED finding at seed " << *green.seed << ": " << green.found->message << "\n";
  } else {
    out << "  clean in " << green.runs << " runs\n";
  }
  return red.found && !green.found ? 0 : 1;
}

}  // namespace kvsim::tools
