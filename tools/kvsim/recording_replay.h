#pragma once
// `kvsim replay --lenient FILE` on a recording from real hardware (a trace marked "origin":
// "real", written by `kvsim real --trace`): it has the scenario, the variant and the core's
// decisions in the order the real run made them, but no simulator decisions. The simulator's
// scheduler is steered by that order instead: decision by decision, each option is tried
// with up to three more decisions chosen after it, the rest of the run taken calmly (no
// preemption, no fault, first data option), and the option whose best run agrees with the
// recorded order longest from the start is kept (then: reaches the recorded finding; then
// recording_order.h's fewest of its own, most followed); options the recording
// cannot tell apart are drawn by a random walk seeded with the trace's seed (and, if the
// run misses the recorded invariant, steered again with the seed + 1, ..., 8 attempts at
// most: the core's order does not say when a copy or a storage read lands). No fault fires:
// the real run injected none besides its scenario's script. The result is an ordinary
// simulator run, deterministic, whose decisions replay strictly.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/variant.h"
#include "tools/kvsim/recording_order.h"
#include "tools/kvsim/run_one.h"
#include "tools/kvsim/trace_input.h"

namespace kvsim::tools {

struct recording_replay {
  run_report report;    // the steered run (everything kept, trace included)
  order_fit fit;        // how it follows the recording
  std::uint64_t runs = 0;      // simulator runs the steering took
  std::uint64_t attempts = 0;  // steerings, each with its walk seeded one higher
  bool within_budget = true;
};

// Steers a run of `loaded` (a recording) as above. `follow` false ignores the recording and
// draws every choice from the seeded walk (what the replay would be without it).
recording_replay replay_recording(const loaded_trace& loaded,
                                  std::optional<core::variant> core_variant = std::nullopt,
                                  bool follow = true);

// The run reached what the recording found: the same invariant (the messages differ: the
// simulator names steps, the real run cannot), or no finding on both.
bool same_invariant(const std::optional<sim::finding>& recorded,
                    const std::optional<sim::finding>& replayed);

}  // namespace kvsim::tools
