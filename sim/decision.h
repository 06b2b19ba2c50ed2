#pragma once
// One decision stream carries all nondeterminism of a run: which runnable actor runs or
// which pending delivery happens (schedule), whether an injected fault fires (fault), and
// data choices such as a message delay (data). A run is (scenario, variant, strategy, seed)
// plus its list of decisions, and that list alone replays it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kvsim::sim {

class step_log;

enum class decision_kind : std::uint8_t { schedule = 0, fault = 1, data = 2 };

const char* to_string(decision_kind kind);

// What was decided. `subject` names the choice stably: for schedule decisions the chosen
// option's id (an actor id, or a delivery id with delivery_bit set), for fault and data
// decisions the tag of what was being decided (fault kind, data tag). Replay matches on it,
// so a trace survives code changes that do not change what is being chosen.
struct decision {
  decision_kind kind = decision_kind::schedule;
  std::uint32_t options = 0;
  std::uint32_t chosen = 0;
  std::uint64_t subject = 0;

  friend bool operator==(const decision&, const decision&) = default;
};

inline constexpr std::uint64_t delivery_bit = std::uint64_t{1} << 63;

// What the world asks of a strategy.
struct decision_request {
  decision_kind kind = decision_kind::schedule;
  std::uint32_t options = 0;
  // schedule: the options' stable ids in ascending order (options == subjects.size()).
  std::span<const std::uint64_t> subjects;
  std::uint64_t tag = 0;               // fault/data: what is being decided
  std::uint32_t fault_per_million = 0;  // fault: how likely the profile makes it
  std::uint64_t step = 0;               // schedule decisions taken so far
  // schedule, in worlds that keep a step log: the options' stable identities
  // (sim/step_log.h), in the order of `subjects` (empty otherwise).
  std::span<const std::uint64_t> threads;
  // schedule, in worlds that keep a step log: the steps so far (the last one just ended).
  const step_log* steps = nullptr;
  bool after_fence = false;  // schedule: virtual time advanced since the last step
  // schedule, in worlds that keep a step log: the stable identities of actors that are ready
  // but parked behind another actor of their strand (sim::world::spawn_on_strand), so not
  // options here; they become options once that actor waits.
  std::span<const std::uint64_t> parked;
};

// The stable 64-bit digest of a decision list (FNV-1a over its fields): equal lists, equal
// hash, in every build type. Printed by runs and compared by the determinism tests.
std::uint64_t decision_hash(std::span<const decision> decisions);

}  // namespace kvsim::sim
