#pragma once
// Swarm testing (Groce et al., ISSTA 2012): each seed also draws which fault kinds are on in
// its run and how often they fire, so that some runs see many drops and no duplicates, others
// the reverse, instead of every run seeing a thin mix of everything. The profile is printed
// with the seed and stored in the trace.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvsim::sim {

enum class fault_kind : std::uint8_t {
  message_delay,
  message_duplicate,
  message_drop,
  transfer_stall,              // a copy step waits (it stays in flight longer)
  transfer_fail,               // a transfer ends Failed part-way
  transfer_timeout_unconfirmed,  // poll says "timed out" while the copy still runs (B12)
  abort,                       // a scenario's abort fires at its phase
  message_replay,              // an adversary replays an earlier message to the same rank
  message_forge,               // an adversary sends a tampered copy of a message with a token
  peer_death,                  // a prefill rank stops for good (its transport confirms later)
};
inline constexpr std::size_t fault_kind_count = 10;

const char* to_string(fault_kind kind);
std::optional<fault_kind> fault_kind_from_string(std::string_view name);

struct fault_profile {
  // Per kind: probability per million that the fault fires at each opportunity; 0 = off.
  std::array<std::uint32_t, fault_kind_count> per_million{};

  std::uint32_t of(fault_kind kind) const { return per_million[static_cast<std::size_t>(kind)]; }
  void set(fault_kind kind, std::uint32_t value) {
    per_million[static_cast<std::size_t>(kind)] = value;
  }

  // Each kind allowed by `allowed_mask` (bit i = fault_kind i) is on with probability 1/2, at
  // one of three levels; the draw uses its own stream so it never shifts the run's decisions.
  static fault_profile draw(std::uint64_t seed, std::uint32_t allowed_mask);

  // "delay=20% duplicate=off drop=5% ...": what is printed with the seed.
  std::string describe() const;

  friend bool operator==(const fault_profile&, const fault_profile&) = default;
};

}  // namespace kvsim::sim
