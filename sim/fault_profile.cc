#include "sim/fault_profile.h"

#include "spec/rng.h"

namespace kvsim::sim {
namespace {

constexpr std::array<std::uint32_t, 3> levels_per_million{50'000, 200'000, 500'000};
// Keeps the profile's stream apart from the decision stream drawn from the same seed.
constexpr std::uint64_t profile_stream_salt = 0x5eedfa17'd00dULL;
// ... and the stop time's stream apart from both.
constexpr std::uint64_t faults_stop_stream_salt = 0x57095'7a11'0f17ULL;
constexpr std::uint64_t faults_stop_horizon_min_us = 64;
constexpr std::uint32_t faults_stop_horizon_doublings = 10;  // horizons 64us .. 32768us

}  // namespace

fault_profile fault_profile::draw(std::uint64_t seed, std::uint32_t allowed_mask) {
  spec::rng random(seed ^ profile_stream_salt);
  fault_profile profile;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    // An abort the scenario asks for always happens: only its timing (the level) is drawn,
    // never a switch that would leave half the seeds without it.
    const bool on = random.below(2) == 1 || static_cast<fault_kind>(i) == fault_kind::abort;
    const std::uint32_t level = levels_per_million[random.below(levels_per_million.size())];
    if (((allowed_mask >> i) & 1u) != 0 && on) profile.per_million[i] = level;
  }
  profile.faults_stop_us = draw_faults_stop_us(seed);
  return profile;
}

std::uint64_t fault_profile::draw_faults_stop_us(std::uint64_t seed) {
  spec::rng random(seed ^ faults_stop_stream_salt);
  const std::uint64_t horizon_us = faults_stop_horizon_min_us
                                   << random.below(faults_stop_horizon_doublings);
  return random.below(static_cast<std::uint32_t>(horizon_us));
}

std::string fault_profile::describe() const {
  std::string text;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    if (!text.empty()) text += " ";
    text += spec::fault_kinds[i].trace_name;
    text += "=";
    if (per_million[i] == 0) {
      text += "off";
    } else {
      const std::uint32_t tenths = per_million[i] / 1000;  // per mille
      text += std::to_string(tenths / 10);
      if (tenths % 10 != 0) text += "." + std::to_string(tenths % 10);
      text += "%";
    }
  }
  if (faults_stop_us != faults_never_stop) {
    text += " faults_stop=" + std::to_string(faults_stop_us) + "us";
  }
  return text;
}

}  // namespace kvsim::sim
