#pragma once
// Swarm testing (Groce et al., ISSTA 2012): each seed also draws which fault kinds are on in
// its run and how often they fire, so that some runs see many drops and no duplicates, others
// the reverse, instead of every run seeing a thin mix of everything. The profile is printed
// with the seed and stored in the trace.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "spec/fault_kinds.h"

namespace kvsim::sim {

// The kinds, their names and rules are the contract's (spec/fault_kinds.h).
using spec::fault_kind;
using spec::fault_kind_count;
using spec::to_string;

// A profile whose faults never stop (see fault_profile::faults_stop_us).
inline constexpr std::uint64_t faults_never_stop = std::numeric_limits<std::uint64_t>::max();

// The kind a trace names (its fault_profile key), if any.
inline std::optional<fault_kind> fault_kind_from_string(std::string_view name) {
  return spec::fault_kind_from_trace_name(name);
}

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

  // Faults stop at this virtual time: from then on the network delivers every message once,
  // on time and untampered, and transfers and storage reads neither stall, fail nor time out,
  // so DOMAIN.md I9 can ask that every request then finishes within the scenario's bound. A
  // scenario's abort is the client's request, not a fault of the environment: it keeps its
  // timing. The default, faults_never_stop, keeps faults on for the whole run: profiles built
  // by hand and traces written before the stop existed (their runs replay as recorded).
  std::uint64_t faults_stop_us = faults_never_stop;

  // Whether `kind` can no longer fire at `now_us`.
  bool stopped(fault_kind kind, std::uint64_t now_us) const {
    return kind != fault_kind::abort && now_us >= faults_stop_us;
  }

  // The stop time drawn from `seed`, on a stream of its own (neither the run's decisions nor
  // the kinds' draw shift): uniform below a horizon of 64us doubled 0..9 times (up to
  // 32768us), so the stop falls early in some seeds, mid-run in others and, in about two
  // thirds, after a catalogue run's last fault opportunity (catalogue runs last 15..150us).
  static std::uint64_t draw_faults_stop_us(std::uint64_t seed);

  // "delay=20% duplicate=off drop=5% ... faults_stop=130us": what is printed with the seed
  // (no stop named when faults never stop).
  std::string describe() const;

  friend bool operator==(const fault_profile&, const fault_profile&) = default;
};

}  // namespace kvsim::sim
