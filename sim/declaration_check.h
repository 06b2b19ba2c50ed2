#pragma once
// The debug check of the declarations the reduction trusts (sim/step_log.h): on a random
// run, every two neighbouring steps of different threads that declared nothing in common
// are swapped and the run replayed; declarations that are right give the same terminal state
// (world::terminal_digest) and the same finding, and from the pair on the same state digest
// (prefix_class_digests) after every step: equal digests, identical continuations. A step
// that reads shared state it did not declare shows here as a swap that changes the outcome,
// the state digests or the rest of the run.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/search/dpor.h"

namespace kvsim::sim {

struct declaration_violation {
  std::uint64_t step = 0;  // the first of the two swapped steps (1-based)
  std::string what;        // one line: the two threads' steps and what differed
};

struct declaration_check_result {
  std::uint64_t swaps = 0;    // pairs swapped and replayed
  std::uint64_t skipped = 0;  // pairs whose second step was not runnable before the first
  std::optional<declaration_violation> violation;  // the first one found
};

// The random run from `seed` (a random walk over every decision, faults as the run function's
// profile allows), then at most `max_swaps` swaps of its independent neighbours.
declaration_check_result check_declarations(const dpor_run_fn& run_once, std::uint64_t seed,
                                            std::uint64_t max_swaps);

}  // namespace kvsim::sim
