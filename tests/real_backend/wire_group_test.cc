// A rank group whose members are processes of their own (kvsim real --ranks N of a HiCache
// case): each member a wire_group on its own messenger, the members linked over loopback TCP
// (authenticated, sealed) and run on threads here as their processes would run them. MIN and
// MAX agree from every member's own combining; a divergence is the finding rank_group reports
// in one process, in the same words, and the same line on every member that waits; a peer
// that never arrives is a finding after the patience; a peer whose process ends, or that
// breaks the protocol, fails the run instead of hanging it.
#include "real_backend/wire/wire_group.h"

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "real_backend/errors.h"
#include "real_backend/wire/link_auth.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/wire/tcp_messenger.h"
#include "tests/real_backend/test_link_key.h"

namespace kvsim::real::wire_group_test {
namespace {

using namespace std::chrono_literals;
using testing::quiet;
using testing::test_key;

// `n` messengers, every pair linked once (each connects to the lower ranks, as
// prefetch_processes.cc links its rank processes).
struct mesh {
  explicit mesh(std::uint32_t n, bool collectives = true) {
    std::vector<std::uint16_t> ports;
    for (core::rank_id k = 0; k < n; ++k) {
      wires.push_back(std::make_unique<tcp_messenger>(k, test_key()));
      wires[k]->set_refusal_log(quiet);
      if (collectives) wires[k]->accept_collectives();
      ports.push_back(wires[k]->listen("127.0.0.1", 0));
    }
    std::vector<std::future<void>> linking;
    for (core::rank_id k = 0; k < n; ++k) {
      linking.push_back(std::async(std::launch::async, [this, k, n, &ports] {
        for (core::rank_id peer = 0; peer < k; ++peer)
          wires[k]->connect(peer, "127.0.0.1", ports[peer], 5000ms);
        wires[k]->accept_peers(n - 1 - k, 5000ms);
      }));
    }
    for (auto& l : linking) l.get();
  }
  std::vector<core::rank_id> members() const {
    std::vector<core::rank_id> m;
    for (core::rank_id k = 0; k < wires.size(); ++k) m.push_back(k);
    return m;
  }
  std::vector<std::unique_ptr<tcp_messenger>> wires;
};

// What `member` throws: the finding of a collective_divergence, or another failure's line
// marked as such.
std::string outcome_of(const std::function<void()>& member) {
  try {
    member();
  } catch (const collective_divergence& d) {
    return d.what();
  } catch (const real_backend_error& e) {
    return std::string("failure: ") + e.what();
  }
  return "no divergence";
}

TEST(WireGroup, MembersCombineTheSameMinAndMaxAndPassTheBarrier) {
  mesh m(3);
  const std::int64_t values[] = {7, -3, 12};
  std::vector<std::future<std::pair<std::int64_t, std::int64_t>>> results;
  for (core::rank_id r = 0; r < 3; ++r) {
    results.push_back(std::async(std::launch::async, [&, r] {
      wire_group me(0, m.members(), *m.wires[r], 5000ms);
      const std::int64_t low = me.all_reduce(values[r], core::reduce_op::min);
      const std::int64_t high = me.all_reduce(values[r], core::reduce_op::max);
      me.barrier();
      EXPECT_EQ(me.barrier_entries(), 1u);
      EXPECT_EQ(me.collectives_entered(), 3u);
      EXPECT_EQ(me.group_rank(), r);
      EXPECT_EQ(me.group_size(), 3u);
      me.finished();
      return std::pair(low, high);
    }));
  }
  for (auto& f : results) EXPECT_EQ(f.get(), (std::pair<std::int64_t, std::int64_t>(-3, 12)));
}

TEST(WireGroup, APeerThatReturnedWithoutTheBarrierIsReportedAtOnce) {
  mesh m(2);
  auto stays = std::async(std::launch::async, [&] {
    wire_group me(0, m.members(), *m.wires[1], 5000ms);
    return outcome_of([&] {
      EXPECT_EQ(me.all_reduce(2, core::reduce_op::max), 2);
      me.barrier();
    });
  });
  wire_group early(0, m.members(), *m.wires[0], 5000ms);
  EXPECT_EQ(early.all_reduce(0, core::reduce_op::max), 2);
  early.finished();  // rank 0 returns early (the seed's H1)
  EXPECT_EQ(stays.get(),
            "I5: rank 1 waits in barrier (collective #2 of group g0), which rank 0 never "
            "entered: it returned after collective #1 (all_reduce_max)");
}

TEST(WireGroup, DifferentCollectivesUnderOneNumberAreOneFindingOnBothRanks) {
  mesh m(2);
  auto reduces = std::async(std::launch::async, [&] {
    wire_group me(0, m.members(), *m.wires[0], 5000ms);
    return outcome_of([&] { (void)me.all_reduce(1, core::reduce_op::max); });
  });
  wire_group barrier(0, m.members(), *m.wires[1], 5000ms);
  const std::string line =
      "I5: rank 1 entered barrier as collective #1 of group g0, where rank 0 entered "
      "all_reduce_max";
  EXPECT_EQ(outcome_of([&] { barrier.barrier(); }), line);
  EXPECT_EQ(reduces.get(), line);
}

TEST(WireGroup, APeerThatNeverArrivesIsAFindingAfterThePatience) {
  mesh m(2);
  wire_group alone(0, m.members(), *m.wires[1], 100ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(outcome_of([&] { (void)alone.all_reduce(1, core::reduce_op::min); }),
            "I5: rank 1 waited 100 ms in all_reduce_min (collective #1 of group g0) without rank "
            "0 (its last: none) entering it");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

// As in one process, the first finding ends every wait of the group: a peer's diverged note
// is what a member then throws (a member that completed the collective before the note
// reached it has gone on, which the run's report does not change: the finding is in it).
TEST(WireGroup, APeersFindingIsWhatEveryLaterWaitThrows) {
  mesh m(2);
  const std::string line =
      "I5: rank 1 waited 100 ms in all_reduce_min (collective #1 of group g0) without rank 0 "
      "(its last: none) entering it";
  m.wires[1]->send_collective(
      0, {0, collective_say::diverged, 1, collective_kind::all_reduce_min, 0, line});
  wire_group late(0, m.members(), *m.wires[0], 5000ms);
  EXPECT_EQ(outcome_of([&] { (void)late.all_reduce(0, core::reduce_op::min); }), line);
  EXPECT_EQ(outcome_of([&] { late.barrier(); }), line);
}

TEST(WireGroup, APeerWhoseProcessEndsFailsTheRunInsteadOfHangingIt) {
  mesh m(2);
  auto waits = std::async(std::launch::async, [&] {
    wire_group me(0, m.members(), *m.wires[1], 20'000ms);
    return outcome_of([&] { me.barrier(); });
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  m.wires[0].reset();  // rank 0's process ends: its links close
  EXPECT_EQ(waits.get(),
            "failure: rank 0 closed its link without returning, while rank 1 waits in collective "
            "#1 of group g0 (its process ended)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(WireGroup, ANoteThatBreaksTheProtocolFailsTheRun) {
  mesh m(2);
  auto waits = std::async(std::launch::async, [&] {
    wire_group me(0, m.members(), *m.wires[1], 5000ms);
    return outcome_of([&] { (void)me.all_reduce(1, core::reduce_op::max); });
  });
  // Rank 0 skips its first collective on the wire.
  m.wires[0]->send_collective(
      1, {0, collective_say::entered, 2, collective_kind::all_reduce_max, 5, {}});
  EXPECT_EQ(waits.get(),
            "failure: control plane: rank 0 broke the collective protocol of group g0: its "
            "collective #2 came as its #1");
  mesh fresh(2);
  auto other_group = std::async(std::launch::async, [&] {
    wire_group me(0, fresh.members(), *fresh.wires[0], 5000ms);
    return outcome_of([&] { (void)me.all_reduce(1, core::reduce_op::max); });
  });
  fresh.wires[1]->send_collective(
      0, {4, collective_say::entered, 1, collective_kind::all_reduce_max, 5, {}});
  EXPECT_EQ(other_group.get(),
            "failure: control plane: rank 1 broke the collective protocol of group g0: a note of "
            "group g4");
}

TEST(WireGroup, AMessengerThatTakesNoCollectivesRefusesThemAsHostile) {
  mesh m(2, false);  // as the links of a transfer script
  m.wires[0]->send_collective(1, {0, collective_say::entered, 1, collective_kind::barrier, 0, {}});
  std::string line = "nothing refused within 5 s";
  try {
    (void)m.wires[1]->receive_for(5000ms);
  } catch (const control_plane_error& e) {
    line = e.what();
  }
  EXPECT_NE(line.find("control plane: rank 0 (127.0.0.1:"), std::string::npos) << line;
  EXPECT_NE(line.find(") sent a collective frame, which rank 1 takes from nobody: refused, link "
                      "closed as hostile"),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace kvsim::real::wire_group_test
