// One ledger replay shared by the checkers of a checker_set (properties/shared_page_ownership.h):
// a checker reading the shared replay, fed after it, judges every log exactly as it does with
// a replay of its own; fed before it, the ledger audit would judge a decision against the
// history that already includes it and miss what it exists to catch.
#include "properties/shared_page_ownership.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <vector>

#include "properties/all_checkers.h"
#include "properties/leak_checker.h"
#include "properties/ledger_audit_checker.h"
#include "properties/misuse_checker.h"
#include "properties/use_after_free_checker.h"
#include "sim/search/random_walk.h"
#include "sim/world.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::shared_page_ownership_test {
namespace {

using core::lease_role;
using core::room_key;
using testing::event_builder;

const room_key a{7, 0};
const room_key b{9, 0};

// Feeds `events` to `checker` and `feed` in the order given for each event, as the world feeds
// its subscribers in attach order; the first finding ends the run, then quiescence is asked.
std::optional<sim::finding> judge(sim::checker& checker, page_ownership_feed& feed,
                                  const std::vector<sim::sim_event>& events, bool feed_first) {
  const auto feeds = [](sim::checker& c, const sim::sim_event& e) {
    return c.subscriptions().contains(sim::event_kind::of(e));
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (feed_first && feeds(feed, events[i])) (void)feed.observe(events[i], i);
    if (feeds(checker, events[i])) {
      if (auto found = checker.observe(events[i], i)) return found;
    }
    if (!feed_first && feeds(feed, events[i])) (void)feed.observe(events[i], i);
  }
  return checker.at_quiescence();
}

// The same log judged by a checker with its own replay and by one reading a shared replay.
template <class Checker>
void judged_alike(const std::vector<sim::sim_event>& events, const char* expected_invariant) {
  Checker alone;
  const auto own = testing::run_to_quiescence(alone, events);
  page_ownership replay;
  page_ownership_feed feed(replay);
  Checker sharing(replay);
  const auto shared = judge(sharing, feed, events, /*feed_first=*/false);
  ASSERT_TRUE(own.has_value()) << "the log must make " << alone.name() << " fire";
  EXPECT_EQ(own->invariant, expected_invariant);
  EXPECT_EQ(shared, own);
}

std::vector<sim::sim_event> quarantined_lease_ended_plainly() {
  event_builder log;
  log.allocated(1, a, {0});
  log.lease_started(1, 1, a, lease_role::source, {0});
  log.lease_quarantined(1, 1, a, {0});
  log.lease_ended(1, 1, a, {0});
  return log.events();
}

TEST(SharedPageOwnership, EachCheckerJudgesAsWithItsOwnReplay) {
  judged_alike<ledger_audit_checker>(quarantined_lease_ended_plainly(), "I8");
  {
    // A late copy into a page freed and handed to another request (B1).
    event_builder log;
    log.allocated(1, a, {4});
    log.freed(1, a, 4);
    log.allocated(1, b, {4});
    log.copied(1, a, 0, 2, 1, 4);
    judged_alike<use_after_free_checker>(log.events(), "I1");
  }
  {
    // Pages still held at quiescence.
    event_builder log;
    log.allocated(1, a, {2, 3});
    log.lease_started(1, 1, a, lease_role::destination, {2, 3});
    judged_alike<leak_checker>(log.events(), "I8");
  }
  {
    // A careless release of a page the caller does not own, which the ledger wrongly accepts.
    event_builder log;
    log.allocated(1, a, {5});
    log.add(sim::misuse_attempted{1, sim::ledger_call::release, b, lease_role::source, {5}, 0, 0, 8});
    log.freed(1, b, 5);
    log.add(sim::misuse_answered{1, std::nullopt});
    judged_alike<misuse_checker>(log.events(), "misuse");
  }
}

TEST(SharedPageOwnership, AFeedBeforeTheCheckerHidesTheHistoryTheAuditJudgesBy) {
  page_ownership replay;
  page_ownership_feed feed(replay);
  ledger_audit_checker audit(replay);
  EXPECT_EQ(judge(audit, feed, quarantined_lease_ended_plainly(), /*feed_first=*/true),
            std::nullopt);
}

TEST(SharedPageOwnership, TheCheckerSetFeedsItsReplayAfterEveryChecker) {
  sim::random_walk chooser(1);
  sim::world w(chooser, sim::world_config{});
  checker_set checkers(0, 1'000'000);
  checkers.attach(w);
  w.spawn({1, "ledger", 0}, [&w] {
    for (const sim::sim_event& e : quarantined_lease_ended_plainly()) {
      w.core_sink().emit(std::get<sim::core_decided>(e.body).what);
    }
  });
  w.run();
  ASSERT_TRUE(w.found().has_value());
  EXPECT_EQ(w.found()->invariant, "I8");
  EXPECT_NE(w.found()->message.find("lease 1 ended plainly, but it was quarantined"),
            std::string::npos)
      << w.found()->message;
}

}  // namespace
}  // namespace kvsim::properties::shared_page_ownership_test
