#include "sim/fault_profile.h"

#include <gtest/gtest.h>

#include <set>

namespace kvsim::sim {
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
  EXPECT_EQ(profile.describe(),
            "delay=off duplicate=off drop=5% stall=off fail=off timeout_unconfirmed=off abort=off "
            "replay=off forge=off peer_death=off");
  EXPECT_EQ(fault_kind_from_string("drop"), fault_kind::message_drop);
  EXPECT_EQ(fault_kind_from_string("peer_death"), fault_kind::peer_death);
  EXPECT_EQ(fault_kind_from_string("nope"), std::nullopt);
}

}  // namespace
}  // namespace kvsim::sim
