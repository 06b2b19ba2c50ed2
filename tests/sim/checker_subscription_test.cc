// Checker subscriptions (sim/checker.h): the world feeds a checker only the event kinds it
// subscribed to, in log order, with the indices of the whole log; and a checker fed only its
// subscriptions judges a run exactly as one fed everything.
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/ack_after_drain_checker.h"
#include "properties/leak_checker.h"
#include "properties/ledger_audit_checker.h"
#include "properties/liveness_checker.h"
#include "properties/misuse_checker.h"
#include "properties/release_after_acks_checker.h"
#include "properties/use_after_free_checker.h"
#include "scenarios/two_rank_abort.h"
#include "sim/search/random_walk.h"
#include "sim/world.h"
#include "tests/sim/two_rank_runs.h"

namespace kvsim::sim::checker_subscription_test {
namespace {

TEST(EventKinds, CoreDecisionsAreNumberedByWhatTheyWrap) {
  EXPECT_EQ(event_kind::of<core::pages_allocated>(), 0u);
  EXPECT_EQ(event_kind::of<core::running_call_refused>(), event_kind::core_count - 1);
  EXPECT_EQ(event_kind::of<actor_started>(), event_kind::core_count + 1);
  EXPECT_EQ(event_kind::of<deadlines_checked>(), event_kind::count - 1);
  const sim_event freed{0, 0, no_actor, core_decided{core::event{1, core::page_freed{}}}};
  EXPECT_EQ(event_kind::of(freed), event_kind::of<core::page_freed>());
  const sim_event copied{0, 0, no_actor, transfer_page_copied{}};
  EXPECT_EQ(event_kind::of(copied), event_kind::of<transfer_page_copied>());
}

TEST(EventKinds, CoreDecidedStandsForEveryDecision) {
  const event_kinds decisions = event_kinds::of<core_decided>();
  for (std::size_t kind = 0; kind < event_kind::count; ++kind) {
    EXPECT_EQ(decisions.contains(kind), kind < event_kind::core_count) << kind;
    EXPECT_TRUE(event_kinds::all().contains(kind)) << kind;
  }
  std::vector<std::size_t> seen;
  (event_kinds::of<page_read>() | event_kinds::of<core::page_freed, core::lease_started>())
      .for_each([&](std::size_t kind) { seen.push_back(kind); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{event_kind::of<core::lease_started>(),
                                            event_kind::of<core::page_freed>(),
                                            event_kind::of<page_read>()}));
}

// Records what it is fed; fires at the `fire_at`-th event it sees.
class recorder : public checker {
 public:
  explicit recorder(event_kinds kinds, std::optional<std::size_t> fire_at = std::nullopt)
      : kinds_(kinds), fire_at_(fire_at) {}
  const char* name() const override { return "recorder"; }
  event_kinds subscriptions() const override { return kinds_; }
  std::optional<finding> observe(const sim_event& e, std::size_t index) override {
    seen.emplace_back(index, event_kind::of(e));
    if (fire_at_ && seen.size() == *fire_at_ + 1) return finding{"I1", "fired", {index}, {}};
    return std::nullopt;
  }
  std::vector<std::pair<std::size_t, std::size_t>> seen;  // (index, kind)

 private:
  event_kinds kinds_;
  std::optional<std::size_t> fire_at_;
};

TEST(CheckerSubscriptions, ACheckerSeesExactlyItsKindsInOrderWithTheLogsIndices) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    random_walk chooser(seed);
    scenarios::two_rank_abort_world w(chooser, seed, {});
    recorder everything(event_kinds::all());
    recorder ledger(event_kinds::of<core::pages_allocated, core::page_freed,
                                    core::lease_started, core::lease_ended>());
    recorder copies(event_kinds::of<transfer_page_copied, actor_started>());
    recorder decisions(event_kinds::of<core_decided>());
    recorder nothing(event_kinds{});
    for (recorder* r : {&everything, &ledger, &copies, &decisions, &nothing}) {
      w.world().add_checker(*r);
    }
    w.run();
    ASSERT_EQ(everything.seen.size(), w.world().events().size());
    for (std::size_t i = 0; i < everything.seen.size(); ++i) {
      ASSERT_EQ(everything.seen[i].first, i);
      ASSERT_EQ(everything.seen[i].second, event_kind::of(w.world().events()[i]));
    }
    for (recorder* r : {&ledger, &copies, &decisions, &nothing}) {
      std::vector<std::pair<std::size_t, std::size_t>> expected;
      for (const auto& seen : everything.seen) {
        if (r->subscriptions().contains(seen.second)) expected.push_back(seen);
      }
      EXPECT_EQ(r->seen, expected) << "seed " << seed;
    }
    EXPECT_FALSE(copies.seen.empty());
    EXPECT_FALSE(ledger.seen.empty());
  }
}

// The world indexes a kind's subscribers at its first event: a checker added after that (here
// by an actor, mid-run) is fed every later event of its kinds, and those already added keep
// theirs.
TEST(CheckerSubscriptions, ACheckerAddedMidRunIsFedTheKindsAlreadyIndexed) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  recorder early(event_kinds::of<fault_fired>());
  recorder late(event_kinds::of<fault_fired>());
  w.add_checker(early);
  w.spawn({0, "emitter", 0}, [&] {
    w.emit(fault_fired{"before"});
    w.step();  // the world feeds (and indexes fault_fired) here
    w.add_checker(late);
    w.emit(fault_fired{"after"});
    w.step();
  });
  w.run();
  EXPECT_EQ(early.seen.size(), 2u);
  ASSERT_EQ(late.seen.size(), 1u);
  EXPECT_EQ(late.seen[0].first, early.seen[1].first);
}

// Among the checkers of one event, the one added first names the finding, and the run ends
// there: the checkers after it, and those not subscribed, are not fed that event.
TEST(CheckerSubscriptions, TheFirstSubscriberAddedNamesTheFinding) {
  random_walk chooser(3);
  scenarios::two_rank_abort_world w(chooser, 3, {});
  recorder other(event_kinds::of<actor_started>());
  recorder first(event_kinds::of<core::pages_allocated>(), 0);
  recorder second(event_kinds::of<core::pages_allocated>(), 0);
  for (recorder* r : {&other, &first, &second}) w.world().add_checker(*r);
  w.run();
  ASSERT_TRUE(w.world().found().has_value());
  ASSERT_EQ(first.seen.size(), 1u);
  EXPECT_EQ(w.world().found()->evidence, std::vector<std::size_t>{first.seen[0].first});
  EXPECT_TRUE(second.seen.empty());
  for (const auto& [index, kind] : other.seen) EXPECT_LT(index, first.seen[0].first);
}

// Hands its checker every event, whatever it subscribed to: the judgement before subscriptions.
class fed_everything : public checker {
 public:
  explicit fed_everything(checker& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  std::optional<finding> observe(const sim_event& e, std::size_t index) override {
    return inner_.observe(e, index);
  }
  std::optional<finding> at_quiescence() override { return inner_.at_quiescence(); }
  std::optional<finding> at_step_limit(std::uint64_t step, std::uint64_t now_us) override {
    return inner_.at_step_limit(step, now_us);
  }
  std::vector<std::string> still_open() const override { return inner_.still_open(); }

 private:
  checker& inner_;
};

std::optional<finding> judge(std::uint64_t seed, scenarios::two_rank_options options,
                             bool everything) {
  random_walk chooser(seed);
  scenarios::two_rank_abort_world w(chooser, seed, options);
  properties::use_after_free_checker use_after_free;
  properties::ack_after_drain_checker ack_after_drain;
  properties::release_after_acks_checker release_after_acks;
  properties::misuse_checker misuse;
  properties::ledger_audit_checker ledger_audit;
  properties::liveness_checker liveness(0, 1'000'000);
  properties::leak_checker leak;
  std::vector<std::unique_ptr<fed_everything>> wrappers;
  for (checker* c : std::initializer_list<checker*>{&use_after_free, &ack_after_drain,
                                                    &release_after_acks, &misuse, &ledger_audit,
                                                    &liveness, &leak}) {
    if (everything) {
      wrappers.push_back(std::make_unique<fed_everything>(*c));
      w.world().add_checker(*wrappers.back());
    } else {
      w.world().add_checker(*c);
    }
  }
  w.run();
  return w.world().found();
}

TEST(CheckerSubscriptions, CheckersFedTheirKindsJudgeAsCheckersFedEverything) {
  std::size_t findings = 0;
  scenarios::two_rank_options leaky;
  leaky.leak_request_b = true;
  for (const scenarios::two_rank_options options : {scenarios::two_rank_options{},
                                                    testing::planted_use_after_free(), leaky}) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      const std::optional<finding> subscribed = judge(seed, options, false);
      EXPECT_EQ(subscribed, judge(seed, options, true)) << "seed " << seed;
      findings += subscribed ? 1 : 0;
    }
  }
  EXPECT_GT(findings, 0u) << "the planted bug must be found, or nothing was compared";
}

}  // namespace
}  // namespace kvsim::sim::checker_subscription_test
