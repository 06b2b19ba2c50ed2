// The seed change's three asymmetric HiCache cases as plain scripted tests: the local rank is
// missing, pending or active while its peer has active storage I/O. With the old early return
// (H1) the first two deadlock at the barrier; with `safe` every rank joins exactly once and
// the host pages are freed exactly once, by their owner, after the barrier.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "core/prefetch_abort.h"
#include "sim/random_walk.h"
#include "sim/sim_collective.h"
#include "sim/sim_storage.h"
#include "sim/world.h"

namespace kvsim {
namespace {

using core::prefetch_state;
using core::room_key;

const room_key aborted{42, 0};

struct hicache_outcome {
  sim::run_end end = sim::run_end::quiescent;
  std::optional<sim::finding> found;
  std::map<core::rank_id, int> barrier_entries;
  std::map<core::rank_id, int> host_page_frees;
};

// Rank 0 is the local rank in `local`; rank 1 is the peer with active I/O.
hicache_outcome run_case(prefetch_state local, core::variant v, std::uint64_t seed) {
  sim::random_walk chooser(seed);
  sim::world w(chooser, sim::world_config{});
  sim::collective_group group(w, 0, {0, 1});
  sim::sim_storage storage0(w, 0);
  sim::sim_storage storage1(w, 1);
  core::prefetch_abort_coordinator rank0(0, {group.member(0), storage0, w.core_sink()}, v);
  core::prefetch_abort_coordinator rank1(1, {group.member(1), storage1, w.core_sink()}, v);
  w.spawn({0, "scheduler", 0}, [&] {
    if (local != prefetch_state::missing) rank0.register_pending(aborted, {0, 1});
    if (local == prefetch_state::active) rank0.start_io(aborted);
    rank0.release_aborted_request(aborted);
  });
  w.spawn({1, "scheduler", 0}, [&] {
    rank1.register_pending(aborted, {4, 5});
    rank1.start_io(aborted);
    rank1.release_aborted_request(aborted);
  });
  hicache_outcome out;
  out.end = w.run().end;
  out.found = w.found();
  for (const auto& e : w.events()) {
    if (const auto* entered = std::get_if<sim::collective_entered>(&e.body)) {
      if (entered->op == sim::collective_op::barrier) ++out.barrier_entries[entered->rank];
    }
    if (const auto* decided = std::get_if<sim::core_decided>(&e.body)) {
      if (std::holds_alternative<core::host_pages_freed>(decided->what.body)) {
        ++out.host_page_frees[decided->what.rank];
      }
    }
  }
  return out;
}

class HiCacheAbort : public ::testing::TestWithParam<prefetch_state> {};

TEST_P(HiCacheAbort, SafeJoinsTheBarrierExactlyOnceOnEveryRank) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    hicache_outcome out = run_case(GetParam(), core::variant::safe(), seed);
    ASSERT_EQ(out.end, sim::run_end::quiescent) << (out.found ? out.found->message : "");
    EXPECT_EQ(out.barrier_entries[0], 1) << "seed " << seed;
    EXPECT_EQ(out.barrier_entries[1], 1) << "seed " << seed;
    EXPECT_EQ(out.host_page_frees[1], 1) << "the active peer frees its pages once";
    EXPECT_EQ(out.host_page_frees[0], GetParam() == prefetch_state::active ? 1 : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(LocalState, HiCacheAbort,
                         ::testing::Values(prefetch_state::missing, prefetch_state::pending,
                                           prefetch_state::active));

TEST(HiCacheAbortH1, AMissingLocalRankReturnsEarlyAndThePeerDeadlocksInTheBarrier) {
  for (prefetch_state local : {prefetch_state::missing, prefetch_state::pending}) {
    hicache_outcome out = run_case(local, core::variant::with(core::bug::h1_early_return), 7);
    ASSERT_TRUE(out.found.has_value());
    EXPECT_EQ(out.found->invariant, "I5");
    EXPECT_EQ(out.barrier_entries[0], 0);
    EXPECT_EQ(out.barrier_entries[1], 1);
    EXPECT_NE(out.found->message.find("r1.scheduler.0 waits on collective g0 seq 2 barrier"),
              std::string::npos)
        << out.found->message;
  }
}

TEST(HiCacheAbortH3, AMissingLocalRankSkippingTheReduceDeadlocksThePeer) {
  hicache_outcome out =
      run_case(prefetch_state::missing, core::variant::with(core::bug::h3_skip_reduce), 7);
  ASSERT_TRUE(out.found.has_value());
  EXPECT_EQ(out.found->invariant, "I5");
  EXPECT_NE(out.found->message.find("seq 1 all_reduce_max"), std::string::npos)
      << out.found->message;
}

TEST(HiCacheAbortH2, AnActiveRankFreesItsHostPagesTwice) {
  hicache_outcome out =
      run_case(prefetch_state::active, core::variant::with(core::bug::h2_divergent_cleanup), 7);
  EXPECT_EQ(out.host_page_frees[0], 2) << "freed before the drain and again by the I/O thread";
}

}  // namespace
}  // namespace kvsim
