// Peer death in the simulator: a dead rank's messages are lost for good, in both directions
// and also when the death comes while a message is in flight; its transfer engine starts
// nothing new and its running copies write on page by page until the NIC stops them (the
// search decides), after which it is quiet and the transport can confirm the teardown.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sim/kv_memory.h"
#include "sim/search/random_walk.h"
#include "sim/sim_liveness.h"
#include "sim/sim_network.h"
#include "sim/sim_transfer_engine.h"

namespace kvsim::sim::peer_death_test {
namespace {

template <class T>
std::size_t count(const world& w) {
  std::size_t n = 0;
  for (const sim_event& e : w.events()) n += std::holds_alternative<T>(e.body) ? 1 : 0;
  return n;
}

TEST(SimLiveness, ARankIsAliveThenLostThenTornDown) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  sim_liveness liveness(w);
  EXPECT_EQ(liveness.state(3), core::peer_state::alive);
  liveness.stop(3);
  EXPECT_EQ(liveness.state(3), core::peer_state::lost);
  EXPECT_FALSE(liveness.alive(3));
  EXPECT_TRUE(liveness.alive(2));
  liveness.confirm_torn_down(3);
  EXPECT_EQ(liveness.state(3), core::peer_state::torn_down);
  EXPECT_EQ(count<rank_stopped>(w), 1u);
  EXPECT_EQ(count<transport_torn_down>(w), 1u);
}

struct mail {
  std::size_t to_survivor = 0;  // what rank 0 received
  std::size_t to_dead = 0;      // what rank 1 received
  std::size_t lost = 0;
};

// Rank 0 and rank 1 each send one message to the other; rank 1 dies at `death_us` (before
// anything is sent, or while the messages are in flight: delivered 10 us late).
mail exchange(std::uint64_t death_us) {
  random_walk chooser(1);
  fault_profile delay_all;
  delay_all.set(fault_kind::message_delay, 1'000'000);
  world w(chooser, world_config{20'000, 64 * 1024, delay_all});
  sim_liveness liveness(w);
  sim_network network(w);
  network.set_liveness(liveness);
  mail out;
  w.spawn({2, "reaper", 0}, [&] {
    if (death_us > 0) w.wait_virtual(death_us);
    liveness.stop(1);
  });
  for (core::rank_id r : {0u, 1u}) {
    w.spawn({r, "peer", 0}, [&, r] {
      w.wait_virtual(2);
      network.endpoint(r).send(1 - r, {core::control_kind::status, r, {5, 0}, {}, {}, {}});
      for (int i = 0; i < 10; ++i) {
        while (network.try_receive(r)) ++(r == 0 ? out.to_survivor : out.to_dead);
        w.wait_virtual(10);
      }
    });
  }
  w.run();
  out.lost = count<message_lost>(w);
  return out;
}

TEST(PeerDeath, MessagesToAndFromADeadRankAreLostForGood) {
  const mail m = exchange(0);
  EXPECT_EQ(m.to_survivor, 0u);
  EXPECT_EQ(m.to_dead, 0u);
  EXPECT_EQ(m.lost, 2u);
}

TEST(PeerDeath, AMessageInFlightWhenItsSenderDiesIsLost) {
  const mail m = exchange(5);  // sent at 2 us, due at 12 us or later
  EXPECT_EQ(m.to_survivor, 0u);
  EXPECT_EQ(m.lost, 2u);
}

TEST(PeerDeath, WithoutADeathBothMessagesArrive) {
  const mail m = exchange(500);
  EXPECT_EQ(m.to_survivor, 1u);
  EXPECT_EQ(m.to_dead, 1u);
  EXPECT_EQ(m.lost, 0u);
}

struct copy_result {
  std::size_t pages_after_death = 0;
  bool quiet_at_end = false;
  std::size_t refused = 0;  // submissions after the death that ended at once
};

// Rank 0 copies 6 pages to rank 1 and dies after the first page; then tries to submit more.
copy_result dead_rank_copies(std::uint64_t seed) {
  random_walk chooser(seed);
  world w(chooser, world_config{});
  kv_memory source(w, 0, 8, 32);
  kv_memory destination(w, 1, 8, 32);
  sim_transfer_engine engine(w, 0, {{0, &source}, {1, &destination}});
  copy_result out;
  bool dead = false;
  std::size_t copied_before = 0;
  w.spawn({0, "scheduler", 0}, [&] {
    const core::transfer_handle h = engine.submit({{9, 0}, 1, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}});
    while (count<transfer_page_copied>(w) == 0) w.step();
    copied_before = count<transfer_page_copied>(w);
    engine.stop();
    dead = true;
    const core::transfer_handle late = engine.submit({{9, 0}, 1, {6}, {6}});
    out.refused = engine.poll(late) == core::transfer_poll::failed ? 1 : 0;
    (void)engine.wait(h);
    out.quiet_at_end = engine.quiet();
  });
  w.run();
  EXPECT_TRUE(dead);
  out.pages_after_death = count<transfer_page_copied>(w) - copied_before;
  return out;
}

TEST(PeerDeath, ADeadRanksNicWritesOnUntilItStopsThenTheEngineIsQuiet) {
  std::map<std::size_t, std::size_t> after_death;  // pages landed after the death -> seeds
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const copy_result r = dead_rank_copies(seed);
    EXPECT_TRUE(r.quiet_at_end) << "seed " << seed;
    EXPECT_EQ(r.refused, 1u) << "a dead rank posts nothing new (seed " << seed << ")";
    ++after_death[r.pages_after_death];
  }
  // The search decides: some deaths stop the writes at once, others let pages land after it.
  EXPECT_GT(after_death[0], 0u);
  std::size_t later = 0;
  for (const auto& [pages, seeds] : after_death) later += pages > 0 ? seeds : 0;
  EXPECT_GT(later, 0u);
}

}  // namespace
}  // namespace kvsim::sim::peer_death_test
