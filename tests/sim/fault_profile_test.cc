#include "sim/fault_profile.h"

#include <gtest/gtest.h>

#include <set>

namespace kvsim::sim::fault_profile_test {
namespace {

constexpr std::uint32_t all_faults = (1u << fault_kind_count) - 1;

TEST(FaultProfile, TheSameSeedDrawsTheSameProfile) {
  EXPECT_EQ(fault_profile::draw(42, all_faults), fault_profile::draw(42, all_faults));
}

TEST(FaultProfile, SeedsDrawDifferentProfilesSwarmStyle) {
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 64; ++seed) seen.insert(fault_profile::draw(seed, all_faults).describe());
  EXPECT_GT(seen.size(), 16u) << "64 seeds should give many distinct fault mixes";
}

TEST(FaultProfile, KindsOutsideTheAllowedMaskStayOff) {
  const std::uint32_t only_drop = 1u << static_cast<unsigned>(fault_kind::message_drop);
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const auto profile = fault_profile::draw(seed, only_drop);
    for (std::size_t i = 0; i < fault_kind_count; ++i) {
      if (static_cast<fault_kind>(i) != fault_kind::message_drop) {
        EXPECT_EQ(profile.per_million[i], 0u);
      }
    }
  }
}

// Peer death was added after the other kinds: it is drawn after them from the same stream,
// so every profile drawn before it existed keeps its other kinds.
TEST(FaultProfile, PeerDeathLeavesTheOtherKindsAsTheyWereDrawn) {
  const std::uint32_t without = all_faults & ~(1u << static_cast<unsigned>(fault_kind::peer_death));
  std::size_t with_death = 0;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    fault_profile all = fault_profile::draw(seed, all_faults);
    with_death += all.of(fault_kind::peer_death) > 0 ? 1 : 0;
    all.set(fault_kind::peer_death, 0);
    EXPECT_EQ(all, fault_profile::draw(seed, without)) << "seed " << seed;
  }
  EXPECT_GT(with_death, 16u);
  EXPECT_LT(with_death, 48u) << "on in about half the seeds, like every kind";
}

TEST(FaultProfile, DescribeNamesEveryKind) {
  fault_profile profile;
  profile.set(fault_kind::message_drop, 50'000);
  const std::string text = profile.describe();
  // The kinds traces have named so far, as they have always been printed...
  EXPECT_EQ(text.rfind("delay=off duplicate=off drop=5% stall=off fail=off timeout_unconfirmed=off "
                       "abort=off replay=off forge=off peer_death=off misuse=off late_status=off",
                       0),
            0u)
      << text;
  // ...and every kind of the vocabulary (spec/fault_kinds.h) in its order, a kind added later
  // included, each with its level.
  std::string every_kind;
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (!every_kind.empty()) every_kind += ' ';
    every_kind.append(row.trace_name);
    every_kind += row.kind == fault_kind::message_drop ? "=5%" : "=off";
  }
  EXPECT_EQ(text, every_kind);
  EXPECT_EQ(fault_kind_from_string("drop"), fault_kind::message_drop);
  EXPECT_EQ(fault_kind_from_string("peer_death"), fault_kind::peer_death);
  EXPECT_EQ(fault_kind_from_string("nope"), std::nullopt);
}

// --- when faults stop ---------------------------------------------------------------------

TEST(FaultProfile, EveryDrawnProfileStopsItsFaultsAtATimeDrawnFromTheSeed) {
  std::set<std::uint64_t> stops;
  std::uint64_t early = 0;
  std::uint64_t late = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    const fault_profile profile = fault_profile::draw(seed, all_faults);
    ASSERT_NE(profile.faults_stop_us, faults_never_stop) << "seed " << seed;
    EXPECT_EQ(profile.faults_stop_us, fault_profile::draw(seed, all_faults).faults_stop_us);
    EXPECT_LT(profile.faults_stop_us, 32768u) << "the widest horizon";
    stops.insert(profile.faults_stop_us);
    early += profile.faults_stop_us < 50 ? 1 : 0;   // within a catalogue run's first faults
    late += profile.faults_stop_us >= 200 ? 1 : 0;  // after a catalogue run's last ones
  }
  EXPECT_GT(stops.size(), 300u);
  // Both ends are drawn often (measured: 162 early, 651 late of 1000).
  EXPECT_GT(early, 100u);
  EXPECT_GT(late, 500u);
}

// The stop has a stream of its own: it is the same whatever kinds the scenario allows, and
// the kinds' draw is the same as for a profile without a stop (so no run's other decisions
// shift).
TEST(FaultProfile, TheStopIsDrawnApartFromTheKinds) {
  const std::uint32_t only_drop = 1u << static_cast<unsigned>(fault_kind::message_drop);
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const fault_profile all = fault_profile::draw(seed, all_faults);
    const fault_profile some = fault_profile::draw(seed, only_drop);
    EXPECT_EQ(all.faults_stop_us, fault_profile::draw_faults_stop_us(seed));
    EXPECT_EQ(some.faults_stop_us, all.faults_stop_us);
    EXPECT_EQ(some.of(fault_kind::message_drop), all.of(fault_kind::message_drop));
  }
}

TEST(FaultProfile, AfterTheStopOnlyTheScenariosAbortStillFires) {
  fault_profile profile;
  EXPECT_EQ(profile.faults_stop_us, faults_never_stop) << "a hand-built profile never stops";
  EXPECT_FALSE(profile.stopped(fault_kind::message_drop, 1'000'000'000));
  profile.faults_stop_us = 120;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    const auto kind = static_cast<fault_kind>(i);
    EXPECT_FALSE(profile.stopped(kind, 119)) << to_string(kind);
    EXPECT_EQ(profile.stopped(kind, 120), kind != fault_kind::abort) << to_string(kind);
  }
}

TEST(FaultProfile, DescribeNamesTheStopWhenThereIsOne) {
  fault_profile profile;
  profile.set(fault_kind::transfer_stall, 200'000);
  EXPECT_EQ(profile.describe().find("faults_stop"), std::string::npos);
  profile.faults_stop_us = 130;
  const std::string text = profile.describe();
  EXPECT_EQ(text.substr(text.size() - std::string(" faults_stop=130us").size()),
            " faults_stop=130us")
      << text;
}

}  // namespace
}  // namespace kvsim::sim::fault_profile_test
