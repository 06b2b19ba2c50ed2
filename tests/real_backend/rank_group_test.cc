// A rank group's collectives with one host thread per member (values combined on the host, as
// on one shared device): MIN and MAX agree, and a divergence is a finding, not a hang.
#include "real_backend/nccl/rank_group.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "real_backend/errors.h"
#include "tests/real_backend/host_data_plane.h"

namespace kvsim::real::rank_group_test {
namespace {

using namespace std::chrono_literals;

struct group_fixture {
  explicit group_fixture(std::uint32_t members, std::chrono::milliseconds patience = 5000ms)
      : plane(host.make_group_plane(members)), group(0, ranks(members), *plane, patience) {}
  static std::vector<core::rank_id> ranks(std::uint32_t n) {
    std::vector<core::rank_id> r;
    for (core::rank_id i = 0; i < n; ++i) r.push_back(i);
    return r;
  }
  testing::host_data_plane host;
  std::unique_ptr<group_plane> plane;
  rank_group group;
};

std::string divergence_of(std::future<void>& f) {
  try {
    f.get();
  } catch (const collective_divergence& d) {
    return d.what();
  }
  return "no divergence";
}

TEST(RankGroup, MembersAgreeOnMinMaxAndPassTheBarrier) {
  group_fixture g(3);
  std::vector<std::future<std::pair<std::int64_t, std::int64_t>>> results;
  for (core::rank_id r = 0; r < 3; ++r) {
    results.push_back(std::async(std::launch::async, [&g, r] {
      core::collective& me = g.group.member(r);
      const std::int64_t low = me.all_reduce(10 + r, core::reduce_op::min);
      const std::int64_t high = me.all_reduce(10 + r, core::reduce_op::max);
      me.barrier();
      g.group.member_finished(r);
      return std::pair(low, high);
    }));
  }
  for (auto& f : results) EXPECT_EQ(f.get(), (std::pair<std::int64_t, std::int64_t>(10, 12)));
  for (core::rank_id r = 0; r < 3; ++r) {
    EXPECT_EQ(g.group.barrier_entries(r), 1u);
    EXPECT_EQ(g.group.collectives_entered(r), 3u);
  }
  EXPECT_EQ(g.group.member(2).group_rank(), 2u);
  EXPECT_EQ(g.group.member(2).group_size(), 3u);
}

TEST(RankGroup, APeerThatReturnedWithoutTheBarrierIsReportedAtOnce) {
  group_fixture g(2);
  auto stays = std::async(std::launch::async, [&] {
    core::collective& me = g.group.member(1);
    (void)me.all_reduce(2, core::reduce_op::max);
    me.barrier();
  });
  (void)g.group.member(0).all_reduce(0, core::reduce_op::max);
  g.group.member_finished(0);  // rank 0 returns early (the seed's H1)
  EXPECT_EQ(divergence_of(stays),
            "I5: rank 1 waits in barrier (collective #2 of group g0), which rank 0 never "
            "entered: it returned after collective #1 (all_reduce_max)");
}

TEST(RankGroup, DifferentCollectivesUnderOneSequenceNumberAreReported) {
  group_fixture g(2);
  auto first = std::async(std::launch::async,
                          [&] { (void)g.group.member(0).all_reduce(1, core::reduce_op::max); });
  while (g.group.collectives_entered(0) == 0) std::this_thread::sleep_for(1ms);
  auto second = std::async(std::launch::async, [&] { g.group.member(1).barrier(); });
  const std::string line =
      "I5: rank 1 entered barrier as collective #1 of group g0, where rank 0 entered "
      "all_reduce_max";
  EXPECT_EQ(divergence_of(second), line);
  EXPECT_EQ(divergence_of(first), line) << "the waiting rank is released with the same finding";
}

TEST(RankGroup, AWaitPastThePatienceIsReportedNamingWhoNeverCame) {
  group_fixture g(2, 100ms);
  auto alone = std::async(std::launch::async,
                          [&] { (void)g.group.member(1).all_reduce(1, core::reduce_op::min); });
  EXPECT_EQ(divergence_of(alone),
            "I5: rank 1 waited 100 ms in all_reduce_min (collective #1 of group g0) without rank "
            "0 (its last: none) entering it");
}

}  // namespace
}  // namespace kvsim::real::rank_group_test
