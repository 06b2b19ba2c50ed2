// The seed change's three asymmetric HiCache cases (and H3's skipped reduce) as plain scripted
// tests: the catalogue scenarios run through prefetch_world on the fixed schedule (option 0
// at every decision: no search). The local rank 0 is missing, pending or active while its peer
// has active storage I/O. With the old early return (H1) the first two deadlock at the
// barrier; with `safe` every rank joins exactly once and the host pages are freed exactly
// once, by their owner, after the barrier.
#include <gtest/gtest.h>

#include <string>

#include "core/variant.h"
#include "properties/all_checkers.h"
#include "scenarios/catalogue.h"
#include "scenarios/prefetch_world.h"
#include "scenarios/scenario_world.h"
#include "sim/first_choice.h"

namespace kvsim::scenarios {
namespace {

scenario_spec from_catalogue(const std::string& name) {
  for (const scenario_spec& s : load_catalogue(KVSIM_CATALOGUE)) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no " << name << " in the catalogue";
  return {};
}

struct hicache_outcome {
  sim::run_end end = sim::run_end::quiescent;
  std::optional<sim::finding> found;
  prefetch_tally tally;
};

hicache_outcome run_scripted(const std::string& scenario, core::variant v) {
  const scenario_spec spec = from_catalogue(scenario);
  sim::first_choice chooser;
  const auto w = make_scenario_world(spec, v, chooser, 1);
  properties::checker_set checkers(properties::liveness_from_us(w->world().faults()),
                                    spec.heal_bound_us);
  checkers.attach(w->world());
  hicache_outcome out;
  out.end = w->run().end;
  out.found = w->world().found();
  out.tally = tally_prefetch(w->world());
  return out;
}

struct hicache_case {
  const char* scenario;
  int local_frees;  // rank 0's host page frees under `safe`: once when it had I/O, else none
};

class HiCacheAbort : public ::testing::TestWithParam<hicache_case> {};

TEST_P(HiCacheAbort, SafeJoinsTheBarrierExactlyOnceOnEveryRankAndFreesOnce) {
  hicache_outcome out = run_scripted(GetParam().scenario, core::variant::safe());
  ASSERT_EQ(out.end, sim::run_end::quiescent) << (out.found ? out.found->message : "");
  EXPECT_EQ(out.tally.barrier_entries.at(0), 1);
  EXPECT_EQ(out.tally.barrier_entries.at(1), 1);
  EXPECT_EQ(out.tally.host_page_frees.at(1), 1) << "the active peer frees its pages once";
  EXPECT_EQ(out.tally.host_page_frees[0], GetParam().local_frees);
}

INSTANTIATE_TEST_SUITE_P(Seed, HiCacheAbort,
                         ::testing::Values(hicache_case{"hicache_local_missing", 0},
                                           hicache_case{"hicache_local_pending", 0},
                                           hicache_case{"hicache_local_active", 1}),
                         [](const auto& case_info) { return std::string(case_info.param.scenario); });

TEST(HiCacheAbortH1, AMissingOrPendingLocalRankReturnsEarlyAndThePeerDeadlocksInTheBarrier) {
  for (const char* scenario : {"hicache_local_missing", "hicache_local_pending"}) {
    hicache_outcome out =
        run_scripted(scenario, core::variant::with(core::bug::h1_early_return));
    ASSERT_TRUE(out.found.has_value()) << scenario;
    EXPECT_EQ(out.found->invariant, "I5");
    EXPECT_EQ(out.tally.barrier_entries[0], 0) << scenario << ": the local rank never joins";
    EXPECT_EQ(out.tally.barrier_entries[1], 1) << scenario << ": the peer waits there alone";
    EXPECT_NE(out.found->message.find("r1.scheduler.0 waits on collective g0 seq 2 barrier"),
              std::string::npos)
        << out.found->message;
  }
}

TEST(HiCacheAbortH1, TwoActiveRanksBothJoinEvenWithTheEarlyReturn) {
  // The old code was right when every rank had I/O: only the asymmetric cases break.
  hicache_outcome out =
      run_scripted("hicache_local_active", core::variant::with(core::bug::h1_early_return));
  EXPECT_EQ(out.end, sim::run_end::quiescent) << (out.found ? out.found->message : "");
  EXPECT_EQ(out.tally.barrier_entries[0], 1);
  EXPECT_EQ(out.tally.barrier_entries[1], 1);
}

TEST(HiCacheAbortH2, AnActiveRankFreesItsHostPagesBeforeTheDrainAndTheIoThreadAgain) {
  hicache_outcome out =
      run_scripted("hicache_local_active", core::variant::with(core::bug::h2_divergent_cleanup));
  ASSERT_TRUE(out.found.has_value());
  EXPECT_EQ(out.found->invariant, "I6");
  EXPECT_NE(out.found->message.find("was freed twice: by the scheduler"), std::string::npos)
      << out.found->message;
  EXPECT_NE(out.found->message.find("and by the io_thread"), std::string::npos)
      << out.found->message;
}

TEST(HiCacheAbortH3, AMissingRankSkippingTheReduceDeadlocksItsPendingPeer) {
  hicache_outcome out =
      run_scripted("h3_skip_reduce", core::variant::with(core::bug::h3_skip_reduce));
  ASSERT_TRUE(out.found.has_value());
  EXPECT_EQ(out.found->invariant, "I5");
  EXPECT_EQ(out.tally.barrier_entries[0], 0);
  EXPECT_NE(out.found->message.find("seq 1 all_reduce_max"), std::string::npos)
      << out.found->message;
}

TEST(HiCacheAbortH3, SafeRunsTheReduceOnBothRanksAndNeedsNoBarrier) {
  // Missing and pending: nobody has I/O, so the agreed maximum is pending and no rank waits.
  hicache_outcome out = run_scripted("h3_skip_reduce", core::variant::safe());
  EXPECT_EQ(out.end, sim::run_end::quiescent) << (out.found ? out.found->message : "");
  EXPECT_EQ(out.tally.barrier_entries[0], 0);
  EXPECT_EQ(out.tally.barrier_entries[1], 0);
}

}  // namespace
}  // namespace kvsim::scenarios
