// The HiCache prefetch scripts of `kvsim real` on the host data plane (one thread per rank,
// storage reads held by a gate until every rank classified): the seed's three asymmetric
// cases and H3, red and green, with the barrier and free counts of the simulator's tests.
#include "real_backend/scripts/prefetch_script.h"

#include <gtest/gtest.h>

#include "real_backend/scripts/script_support.h"
#include "tests/real_backend/catalogue_lookup.h"
#include "tests/real_backend/host_data_plane.h"

namespace kvsim::real::prefetch_script_test {
namespace {

using testing::from_catalogue;
using testing::lines_of;

struct result {
  real_outcome outcome;
  prefetch_counts counts;
};

result run(const std::string& scenario, const std::string& variant) {
  testing::host_data_plane plane;
  result r;
  r.outcome = run_prefetch_script(from_catalogue(scenario), *real_variant(variant), variant, plane,
                                  {}, &r.counts);
  return r;
}

struct hicache_case {
  const char* scenario;
  std::uint32_t local_frees;  // rank 0's host page frees under safe
};

class RealHiCache : public ::testing::TestWithParam<hicache_case> {};

TEST_P(RealHiCache, SafeJoinsTheBarrierOnceOnEveryRankAndFreesOnce) {
  const result r = run(GetParam().scenario, "safe");
  EXPECT_TRUE(r.outcome.findings.empty()) << lines_of(r.outcome.findings);
  EXPECT_EQ(r.counts.barrier_entries.at(0), 1u);
  EXPECT_EQ(r.counts.barrier_entries.at(1), 1u);
  EXPECT_EQ(r.counts.host_page_frees.at(1), 1u);
  EXPECT_EQ(r.counts.host_page_frees.at(0), GetParam().local_frees);
  EXPECT_TRUE(r.outcome.simulated_peers);
}

INSTANTIATE_TEST_SUITE_P(Seed, RealHiCache,
                         ::testing::Values(hicache_case{"hicache_local_missing", 0},
                                           hicache_case{"hicache_local_pending", 0},
                                           hicache_case{"hicache_local_active", 1}),
                         [](const auto& case_info) {
                           return std::string(case_info.param.scenario);
                         });

TEST(RealHiCacheH1, AnEarlyReturnLeavesTheActivePeerAloneInTheBarrier) {
  for (const char* scenario : {"hicache_local_missing", "hicache_local_pending"}) {
    const result r = run(scenario, "H1");
    ASSERT_EQ(r.outcome.findings.size(), 1u) << scenario << "\n" << lines_of(r.outcome.findings);
    EXPECT_EQ(r.outcome.findings[0].message,
              "I5: rank 1 waits in barrier (collective #2 of group g0), which rank 0 never "
              "entered: it returned after collective #1 (all_reduce_max)")
        << scenario;
    EXPECT_EQ(r.counts.barrier_entries.at(0), 0u);
    EXPECT_EQ(r.counts.barrier_entries.at(1), 1u);
  }
}

TEST(RealHiCacheH1, TwoActiveRanksBothJoinEvenWithTheEarlyReturn) {
  const result r = run("hicache_local_active", "H1");
  EXPECT_TRUE(r.outcome.findings.empty()) << lines_of(r.outcome.findings);
}

TEST(RealHiCacheH2, HostPagesFreedWithoutTheDrainAreFreedWhileTheReadIsInFlight) {
  // Each active rank frees before it waits for its read (held until a poll): one finding
  // per rank, in whichever order the threads report them.
  const result r = run("hicache_local_active", "H2");
  ASSERT_EQ(r.outcome.findings.size(), 2u) << lines_of(r.outcome.findings);
  for (const auto& f : r.outcome.findings) {
    EXPECT_EQ(f.invariant, "I6");
    EXPECT_NE(f.message.find("I6: the scheduler freed host pages [0,1] of room 22/gen 0 on rank "),
              std::string::npos)
        << f.message;
    EXPECT_NE(f.message.find("while its storage read was still in flight"), std::string::npos)
        << f.message;
  }
}

TEST(RealHiCacheH3, AMissingRankSkippingTheReduceLeavesItsPeerInIt) {
  const result red = run("h3_skip_reduce", "H3");
  ASSERT_EQ(red.outcome.findings.size(), 1u) << lines_of(red.outcome.findings);
  EXPECT_EQ(red.outcome.findings[0].message,
            "I5: rank 1 waits in all_reduce_max (collective #1 of group g0), which rank 0 never "
            "entered: it returned without entering any collective of the group");
  const result green = run("h3_skip_reduce", "safe");
  EXPECT_TRUE(green.outcome.findings.empty()) << lines_of(green.outcome.findings);
  EXPECT_EQ(green.counts.barrier_entries.at(0), 0u);
  EXPECT_EQ(green.counts.barrier_entries.at(1), 0u);
}

}  // namespace
}  // namespace kvsim::real::prefetch_script_test
