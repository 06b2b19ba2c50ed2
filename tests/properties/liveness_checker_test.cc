#include "properties/liveness_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::liveness_checker_test {
namespace {

using core::request_outcome;
using core::room_key;
using testing::event_builder;
using testing::observe_all;
using testing::run_to_quiescence;

const room_key request_a{7, 0};
const room_key request_c{9, 0};

// The builder stamps each event at t = 10us per step.
std::size_t finished(event_builder& log, core::rank_id rank, room_key key) {
  return log.decided(rank, core::request_finished{key, request_outcome::aborted});
}
std::size_t tick(event_builder& log) { return log.add(sim::fault_fired{"tick"}); }

// --- fires ------------------------------------------------------------------------------

TEST(LivenessChecker, FiresOnTheFirstEventPastTheBoundAfterFaultsStopped) {
  event_builder log;
  const auto start = log.at(0).allocated(1, request_a, {3});  // t=0
  log.at(1050);
  tick(log);                    // t=10500: exactly at the bound, still in time
  const auto late = tick(log);  // step 1051, t=10510

  liveness_checker checker(500, 10'000);
  const sim::finding expected{
      "I9",
      "I9: room 7/gen 0 on rank 1 started at t=0us has not finished by t=10500us, 10000us after "
      "faults stopped at t=500us",
      {start, late},
      {"room 7/gen 0 on rank 1 started at t=0us (step 0, pages_allocated), due by t=10500us, "
       "unfinished at step 1051 (t=10510us)"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(LivenessChecker, CountsTheBoundFromTheStartOfARequestThatStartsAfterFaultsStopped) {
  event_builder log;
  const auto start = log.at(90).decided(0, core::room_opened{request_a});  // t=900
  const auto late = log.at(191).decided(0, core::room_opened{request_c});  // t=1910

  liveness_checker checker(500, 1'000);
  const sim::finding expected{
      "I9",
      "I9: room 7/gen 0 on rank 0 started at t=900us has not finished by t=1900us, 1000us after "
      "it started",
      {start, late},
      {"room 7/gen 0 on rank 0 started at t=900us (step 90, room_opened), due by t=1900us, "
       "unfinished at step 191 (t=1910us)"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(LivenessChecker, FiresOnARequestThatFinishesTooLateAndNamesEveryOverdueOne) {
  event_builder log;
  const auto a = log.at(1).decided(1, core::abort_armed{request_a, {0}, 77, std::nullopt});  // t=10
  const auto c = log.at(2).allocated(0, request_c, {1});                       // t=20
  const auto late =
      log.at(50).decided(1, core::request_finished{request_a, request_outcome::aborted});

  liveness_checker checker(0, 100);
  const sim::finding expected{
      "I9",
      "I9: room 7/gen 0 on rank 1 started at t=10us has not finished by t=110us, 100us after it "
      "started",
      {a, c, late},
      {"room 7/gen 0 on rank 1 started at t=10us (step 1, abort_armed), due by t=110us, "
       "unfinished at step 50 (t=500us)",
       "room 9/gen 0 on rank 0 started at t=20us (step 2, pages_allocated), due by t=120us, "
       "unfinished at step 50 (t=500us)"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(LivenessChecker, FiresAtQuiescenceOnRequestsThatNeverFinished) {
  event_builder log;
  const auto c = log.at(1).allocated(1, request_c, {1});        // t=10, rank 1
  const auto a = log.decided(0, core::room_opened{request_a});  // t=20, rank 0
  finished(log, 1, request_a);  // finishing on rank 1 does not finish it on rank 0

  liveness_checker checker(0, 1'000'000);
  const sim::finding expected{
      "I9",
      "I9: room 9/gen 0 on rank 1 started at t=10us never finished; room 7/gen 0 on rank 0 "
      "started at t=20us never finished",
      {c, a},
      {"room 9/gen 0 on rank 1 started at t=10us (step 1, pages_allocated), never finished",
       "room 7/gen 0 on rank 0 started at t=20us (step 2, room_opened), never finished"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

// A run that spins without events (pollers, sleepers) is cut short by the step limit: the
// world asks the checker at the clock the run reached, and an overdue request fires then.
TEST(LivenessChecker, FiresAtTheStepLimitOnARequestPastItsDueTime) {
  event_builder log;
  const auto a = log.at(3).allocated(1, request_a, {3});  // t=30
  liveness_checker checker(500, 1'000);                    // due by t=1500
  ASSERT_EQ(observe_all(checker, log.events()), std::nullopt);

  EXPECT_EQ(checker.at_step_limit(20'000, 1'500), std::nullopt) << "at the bound: still in time";
  const sim::finding expected{
      "I9",
      "I9: room 7/gen 0 on rank 1 started at t=30us has not finished by t=1500us, 1000us after "
      "faults stopped at t=500us",
      {a},
      {"room 7/gen 0 on rank 1 started at t=30us (step 3, pages_allocated), due by t=1500us, "
       "unfinished at step 20000 (t=1501us)"}};
  EXPECT_EQ(checker.at_step_limit(20'000, 1'501), expected);
}

// The evidence a deadlock or livelock finding carries about requests: every unfinished one,
// in start order, with its due time; finished ones are not named.
TEST(LivenessChecker, NamesItsUnfinishedRequestsForAStuckRun) {
  event_builder log;
  log.at(1).allocated(1, request_c, {1});        // t=10
  log.decided(0, core::room_opened{request_a});  // t=20
  log.decided(2, core::room_opened{request_a});  // t=30
  finished(log, 2, request_a);
  liveness_checker checker(100, 1'000);
  ASSERT_EQ(observe_all(checker, log.events()), std::nullopt);
  EXPECT_EQ(checker.still_open(),
            (std::vector<std::string>{
                "unfinished: room 9/gen 0 on rank 1 started at t=10us (step 1, pages_allocated), "
                "due by t=1100us",
                "unfinished: room 7/gen 0 on rank 0 started at t=20us (step 2, room_opened), due "
                "by t=1100us"}));
  finished(log, 1, request_c);
  finished(log, 0, request_a);
  liveness_checker all_done(100, 1'000);
  ASSERT_EQ(observe_all(all_done, log.events()), std::nullopt);
  EXPECT_TRUE(all_done.still_open().empty());
}

// I9 counts from the drawn stop; a profile whose faults never stop (hand-built, or a trace
// written before the stop existed) is judged as such runs always were, from each start.
TEST(LivenessChecker, CountsFromTheProfilesFaultStop) {
  sim::fault_profile profile;
  EXPECT_EQ(liveness_from_us(profile), 0u);
  profile.faults_stop_us = 730;
  EXPECT_EQ(liveness_from_us(profile), 730u);
  EXPECT_EQ(liveness_from_us(sim::fault_profile::draw(9, 0)),
            sim::fault_profile::draw_faults_stop_us(9));
}

// --- quiet ------------------------------------------------------------------------------

TEST(LivenessChecker, StaysQuietWhenEveryRequestFinishesInTime) {
  event_builder log;
  log.at(0).decided(0, core::room_opened{request_a});
  log.allocated(0, request_a, {1});  // already started: the bound stays
  log.allocated(1, request_a, {4});
  log.decided(1, core::abort_armed{request_a, {0}, 77, std::nullopt});
  finished(log, 1, request_a);
  log.at(100).decided(0, core::request_finished{request_a, request_outcome::aborted});  // t=1000
  log.allocated(0, request_a, {1});  // finished stays finished
  log.at(100'000);
  tick(log);

  liveness_checker checker(0, 1'000);
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(LivenessChecker, StaysQuietOnARequestThatFinishedBeforeItsFirstStartEvent) {
  event_builder log;
  finished(log, 0, request_a);
  log.decided(0, core::room_opened{request_a});  // a late open of a finished request
  log.at(1'000'000);
  tick(log);

  liveness_checker checker(0, 10);
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

// Peer death: what a dead rank had started died with it; the survivors still owe theirs.
TEST(LivenessChecker, ARankThatDiedOwesNothingButTheSurvivorsDo) {
  event_builder log;
  log.allocated(0, request_a, {3});  // on the rank that dies
  const auto survivor = log.allocated(2, request_a, {5});
  log.add(sim::rank_stopped{0});
  log.decided(0, core::room_opened{request_c});  // its last decisions before it stops

  liveness_checker checker(0, 10'000);
  const auto found = run_to_quiescence(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message, "I9: room 7/gen 0 on rank 2 started at t=20us never finished");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{survivor});
}

TEST(LivenessChecker, KeepsItsParameters) {
  const liveness_checker checker(500, 10'000);
  EXPECT_EQ(checker.heal_from_us(), 500u);
  EXPECT_EQ(checker.bound_us(), 10'000u);
}

}  // namespace
}  // namespace kvsim::properties::liveness_checker_test
