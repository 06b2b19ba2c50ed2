// Dynamic partial-order reduction (sim/search/dpor.h) on toy worlds that declare what they touch
// (sim/step_log.h), against brute force (every option at every decision): the same terminal
// states and findings, and no more runs than twice the number of Mazurkiewicz traces (the
// classes of brute-force runs equal up to the order of independent steps). Independent
// actors take one run; a race, message order, a collective and a fault as a choice each
// take what they need; a race whose read is not declared is missed (why declarations
// matter); the preemption bound and max_faults cut what they say.
#include "sim/search/dpor.h"

#include <gtest/gtest.h>

#include "sim/declaration_check.h"

#include <iostream>
#include <memory>
#include <vector>

#include "sim/sim_collective.h"
#include "sim/sim_network.h"
#include "sim/wait_queue.h"

namespace kvsim::sim::dpor_test {
namespace {

using inspect_fn = std::function<void(const world&)>;

std::uint64_t binomial(std::uint64_t n, std::uint64_t k) {
  std::uint64_t c = 1;
  for (std::uint64_t i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

dpor_result search(const dpor_run_fn& run, reduction mode, std::uint32_t max_faults = 0,
                   std::optional<std::uint32_t> bound = std::nullopt) {
  dpor_options options;
  options.mode = mode;
  options.max_faults = max_faults;
  options.preemption_bound = bound;
  options.collect_trace_classes = true;
  return dpor_search(run, options);
}

// What dpor must show against brute force on one world.
void expect_sound(const char* name, const dpor_run_fn& run, std::uint32_t max_faults = 0) {
  const dpor_result brute = search(run, reduction::none, max_faults);
  const dpor_result reduced = search(run, reduction::dpor, max_faults);
  std::cout << name << ": brute force " << brute.runs << " runs, " << brute.trace_classes.size()
            << " traces, " << brute.terminal_digests.size() << " terminal states; dpor "
            << reduced.runs << " runs (" << reduced.sleep_blocked << " sleep-blocked)\n";
  ASSERT_TRUE(brute.exhausted);
  ASSERT_TRUE(reduced.exhausted);
  EXPECT_EQ(reduced.terminal_digests, brute.terminal_digests) << name;
  EXPECT_EQ(reduced.finding_invariants, brute.finding_invariants) << name;
  EXPECT_EQ(reduced.trace_classes, brute.trace_classes) << name;
  EXPECT_LE(reduced.runs, 2 * std::max<std::size_t>(1, brute.trace_classes.size()) +
                              (brute.findings > 0 ? brute.runs - brute.trace_classes.size() : 0))
      << name;
}

// The config of a search's worlds: one pool of fiber stacks for every run, as kvsim's searches
// have (under AddressSanitizer, fresh stacks per run would cost most of these tests' time).
world_config pooled(const std::shared_ptr<fiber_stacks>& stacks) {
  world_config config;
  config.stack_pool = stacks.get();
  return config;
}

// Two actors on ranks 0 and 1 that each take k steps touching only their own rank.
dpor_run_fn independent_pair(std::uint32_t k) {
  return [k, stacks = std::make_shared<fiber_stacks>()](strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, pooled(stacks));
    for (core::rank_id rank : {0u, 1u}) {
      w.spawn({rank, "worker", 0}, [&w, k] {
        for (std::uint32_t i = 1; i < k; ++i) w.step();
      });
    }
    w.run();
    inspect(w);
  };
}

// A writer moves a shared counter from 0 to 1 and, a step later, to 2; a reader reads it
// once (a finding when it sees the transient 1); a bystander takes steps of its own. The
// counter is a declared object, unless `declared` is false (then the search cannot see the
// race: what an undeclared cross-rank read costs).
dpor_run_fn racing_pair(std::uint32_t bystander_steps, bool declared = true) {
  return [bystander_steps, declared, stacks = std::make_shared<fiber_stacks>()](
             strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, pooled(stacks));
    auto counter = std::make_shared<std::uint32_t>(0);
    auto seen = std::make_shared<std::uint32_t>(99);
    const std::uint64_t object = object_token(object_kind::flag, 77);
    w.add_state_digest([seen](const std::function<void(std::uint64_t)>& add) { add(*seen); });
    w.spawn({0, "writer", 0}, [&w, counter, object, declared] {
      if (declared) w.touch(object, access::write);
      *counter = 1;
      w.step();
      if (declared) w.touch(object, access::write);
      *counter = 2;
    });
    w.spawn({1, "reader", 0}, [&w, counter, seen, object, declared] {
      if (declared) w.touch(object, access::read);
      *seen = *counter;
      if (*counter == 1) w.report(finding{"toy", "the reader saw the transient 1", {}, {}});
    });
    w.spawn({3, "bystander", 0}, [&w, bystander_steps] {
      for (std::uint32_t i = 0; i < bystander_steps; ++i) w.step();
    });
    w.run();
    inspect(w);
  };
}

// Ranks 0 and 1 each send `messages` messages to rank 2, which receives them all and
// records who sent each, in order; `delay` turns message delays on (each a fault).
dpor_run_fn two_senders(std::uint32_t messages, bool delay) {
  return [messages, delay, stacks = std::make_shared<fiber_stacks>()](strategy& chooser, const inspect_fn& inspect) {
    world_config config = pooled(stacks);
    if (delay) config.faults.set(fault_kind::message_delay, 1'000'000);
    world w(chooser, config);
    sim_network network(w);
    auto order = std::make_shared<std::vector<std::uint64_t>>();
    w.add_state_digest([order](const std::function<void(std::uint64_t)>& add) {
      for (const std::uint64_t from : *order) add(from);
    });
    for (core::rank_id from : {0u, 1u}) {
      w.spawn({from, "sender", 0}, [&network, from, messages] {
        for (std::uint32_t i = 0; i < messages; ++i) {
          core::control_message m;
          m.kind = core::control_kind::metadata;
          m.key = core::room_key{from, i};
          network.endpoint(from).send(2, m);
        }
      });
    }
    core::messenger& inbox = network.endpoint(2);
    w.spawn({2, "receiver", 0}, [&inbox, order, messages] {
      for (std::uint32_t i = 0; i < 2 * messages; ++i) order->push_back(inbox.receive().from);
    });
    w.run();
    inspect(w);
  };
}

// Three ranks meet at a barrier, then each takes a number from a shared queue of tickets
// (a declared object): who gets which ticket depends on the order after the barrier.
dpor_run_fn barrier_then_tickets() {
  return [stacks = std::make_shared<fiber_stacks>()](strategy& chooser, const inspect_fn& inspect) {
    world w(chooser, pooled(stacks));
    collective_group group(w, 0, {0, 1, 2});
    auto next_ticket = std::make_shared<std::uint64_t>(0);
    auto tickets = std::make_shared<std::vector<std::uint64_t>>(3, 0);
    w.add_state_digest([tickets](const std::function<void(std::uint64_t)>& add) {
      for (const std::uint64_t t : *tickets) add(t);
    });
    for (core::rank_id rank : {0u, 1u, 2u}) {
      w.spawn({rank, "member", 0}, [&w, &group, rank, next_ticket, tickets] {
        w.step();
        group.member(rank).barrier();
        w.step();
        w.touch(object_token(object_kind::flag, 1), access::write);
        (*tickets)[rank] = ++*next_ticket;
      });
    }
    w.run();
    inspect(w);
  };
}

TEST(Dpor, TwoIndependentActorsTakeOneRunWhereBruteForceTakesEveryInterleaving) {
  for (std::uint32_t k : {1u, 2u, 3u, 4u}) {
    const dpor_result brute = search(independent_pair(k), reduction::none);
    const dpor_result reduced = search(independent_pair(k), reduction::dpor);
    EXPECT_TRUE(brute.exhausted);
    EXPECT_EQ(brute.runs, binomial(2 * k, k)) << "k=" << k;
    EXPECT_EQ(brute.trace_classes.size(), 1u) << "k=" << k;
    EXPECT_TRUE(reduced.exhausted);
    EXPECT_EQ(reduced.runs, 1u) << "k=" << k;
  }
}

TEST(Dpor, ARaceIsFoundAndEveryOutcomeReachedAsByBruteForce) {
  expect_sound("racing pair", racing_pair(2));
  const dpor_result reduced = search(racing_pair(3), reduction::dpor);
  EXPECT_EQ(reduced.finding_invariants, std::set<std::string>{"toy"});
  // The bystander's steps commute with everything: three outcomes (0, 1, 2) in three runs.
  EXPECT_EQ(reduced.runs, 3u);
}

TEST(Dpor, AnUndeclaredReadHidesTheRace) {
  const dpor_result brute = search(racing_pair(1, false), reduction::none);
  const dpor_result reduced = search(racing_pair(1, false), reduction::dpor);
  EXPECT_EQ(brute.finding_invariants, std::set<std::string>{"toy"});
  EXPECT_TRUE(reduced.finding_invariants.empty());
  EXPECT_EQ(reduced.runs, 1u);
}

TEST(Dpor, MessageOrderAtOneReceiverIsExploredAsByBruteForce) {
  expect_sound("two senders, 1 message each", two_senders(1, false));
  // Two messages each: brute force passes a million runs; dpor runs each of the 6 arrival
  // orders' traces once.
  const dpor_result reduced = search(two_senders(2, false), reduction::dpor);
  EXPECT_TRUE(reduced.exhausted);
  EXPECT_EQ(reduced.terminal_digests.size(), 6u);
  EXPECT_EQ(reduced.runs, reduced.trace_classes.size());
}

TEST(Dpor, ACollectiveAndWhatFollowsItAreExploredAsByBruteForce) {
  expect_sound("barrier then tickets", barrier_then_tickets());
  const dpor_result reduced = search(barrier_then_tickets(), reduction::dpor);
  EXPECT_EQ(reduced.terminal_digests.size(), 6u);  // 3! ticket orders
}

TEST(Dpor, FaultsAreChoicesBoundedByMaxFaults) {
  expect_sound("two senders with delays, K=1", two_senders(1, true), 1);
  const dpor_result none = search(two_senders(1, true), reduction::dpor, 0);
  const dpor_result one = search(two_senders(1, true), reduction::dpor, 1);
  const dpor_result two = search(two_senders(1, true), reduction::dpor, 2);
  EXPECT_GT(none.faults_cut, 0u);
  EXPECT_EQ(two.faults_cut, 0u);  // two messages: two delays at most
  EXPECT_LT(none.runs, one.runs);
  EXPECT_LT(one.runs, two.runs);
  EXPECT_TRUE(two.exhausted);
}

// Determinism: the same search twice takes the same runs to the same digests and the same
// first finding (CI runs this in the default and the ASan build).
TEST(Dpor, TheSameSearchTwiceIsTheSameSearch) {
  const dpor_result first = search(two_senders(2, false), reduction::dpor, 0);
  const dpor_result second = search(two_senders(2, false), reduction::dpor, 0);
  EXPECT_EQ(first.runs, second.runs);
  EXPECT_EQ(first.distinct_states, second.distinct_states);
  EXPECT_EQ(first.terminal_digests, second.terminal_digests);
  EXPECT_EQ(first.trace_classes, second.trace_classes);
  const dpor_result red = search(racing_pair(2), reduction::dpor);
  const dpor_result again = search(racing_pair(2), reduction::dpor);
  ASSERT_TRUE(red.first_finding);
  EXPECT_EQ(red.first_finding_decisions, again.first_finding_decisions);
  EXPECT_EQ(red.first_finding_run, again.first_finding_run);
}

TEST(Dpor, ThePreemptionBoundCutsTheSearch) {
  const dpor_result unbounded = search(two_senders(2, false), reduction::dpor);
  const dpor_result bounded = search(two_senders(2, false), reduction::dpor, 0, 0);
  EXPECT_TRUE(bounded.exhausted);
  EXPECT_LE(bounded.runs, unbounded.runs);
  EXPECT_GT(bounded.beyond_bound, 0u);
}

}  // namespace
}  // namespace kvsim::sim::dpor_test

namespace kvsim::sim::dpor_test {
namespace {

// The debug check swaps independent neighbours of random runs: it fires on the race whose
// read is not declared (the swapped run sees the other value) and stays quiet once it is.
TEST(DeclarationCheck, FiresOnAnUndeclaredReadAndNotOnADeclaredOne) {
  bool fired = false;
  std::uint64_t swaps = 0;
  for (std::uint64_t seed = 1; seed <= 40 && !fired; ++seed) {
    const declaration_check_result r = check_declarations(racing_pair(1, false), seed, 100);
    swaps += r.swaps;
    if (r.violation) {
      fired = true;
      std::cout << "undeclared read, seed " << seed << ": " << r.violation->what << "\n";
    }
  }
  EXPECT_TRUE(fired) << swaps << " swaps, none changed the outcome";
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const declaration_check_result r = check_declarations(racing_pair(1, true), seed, 100);
    EXPECT_FALSE(r.violation) << "seed " << seed << ": " << r.violation->what;
  }
}

}  // namespace
}  // namespace kvsim::sim::dpor_test
