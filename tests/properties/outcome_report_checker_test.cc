#include "properties/outcome_report_checker.h"

#include <gtest/gtest.h>

#include <optional>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::outcome_report_checker_test {
namespace {

using core::control_kind;
using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
constexpr core::rank_id prefill = 0;
constexpr core::rank_id decode = 1;

// The sender's decision, then its message on the wire; returns the decision's index.
std::size_t report(event_builder& log, bool failed, core::rank_id to = decode) {
  const auto decided = log.decided(prefill, core::outcome_reported{request_a, to, failed});
  log.add(sim::message_sent{decided, prefill, to,
                            failed ? control_kind::status : control_kind::chunk_ready, request_a,
                            false});
  return decided;
}
std::size_t submit(event_builder& log, sim::transfer_id id) {
  return log.add(sim::transfer_submitted{id, request_a, prefill, decode, {1}, {2}});
}
std::size_t end(event_builder& log, sim::transfer_id id,
                core::transfer_poll outcome = core::transfer_poll::succeeded) {
  return log.add(sim::transfer_ended{id, request_a, outcome});
}

// --- fires ------------------------------------------------------------------------------

TEST(OutcomeReportChecker, FiresOnChunkReadyForARequestWhoseTransferFailed) {
  // A sender that forgets the failure tells decode the pages are written: decode reads
  // pages the failed copy never filled.
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});  // step 1
  submit(log, 3);                                     // step 2
  const auto failed = end(log, 3, core::transfer_poll::failed);
  const auto sent = report(log.at(9), false);
  outcome_report_checker checker;
  const sim::finding expected{
      "I4",
      "I4: prefill rank 0 told decode rank 1 at step 9 that room 7/gen 0 ended chunk_ready, but "
      "the request had failed there at step 3 (a request a prefill rank failed is never "
      "completed on decode)",
      {failed, sent},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeReportChecker, FiresOnChunkReadyAfterATimeoutOrAnAcceptedAbortOrAnInjectedFailure) {
  const auto chunk_ready_after = [](auto&& cause) {
    event_builder log;
    log.decided(prefill, core::room_opened{request_a});
    submit(log, 3);
    cause(log);
    end(log, 3);
    report(log, false);
    outcome_report_checker checker;
    const auto found = observe_all(checker, log.events());
    return found ? found->invariant : std::string("none");
  };
  EXPECT_EQ(chunk_ready_after([](event_builder& log) {
              log.add(sim::transfer_timed_out{3, request_a, true});
            }),
            "I4");
  EXPECT_EQ(chunk_ready_after([](event_builder& log) {
              log.decided(prefill, core::ack_target_registered{request_a, decode, 5});
            }),
            "I4");
  EXPECT_EQ(chunk_ready_after([](event_builder& log) {
              log.add(sim::failure_injected{request_a, prefill});
            }),
            "I4");
}

TEST(OutcomeReportChecker, FiresOnFailedWithoutACause) {
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});
  submit(log, 3);
  end(log, 3);
  const auto sent = report(log.at(8), true);
  outcome_report_checker checker;
  const sim::finding expected{
      "I9",
      "I9: prefill rank 0 told decode rank 1 at step 8 that room 7/gen 0 ended Failed, but "
      "nothing failed it there (no failed or timed-out transfer, no injected failure, no "
      "accepted ABORT)",
      {sent},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeReportChecker, FiresOnAReportWhileATransferStillRuns) {
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});
  const auto submitted = log.at(4).add(
      sim::transfer_submitted{3, request_a, prefill, decode, {1}, {2}});
  const auto sent = report(log.at(6), false);
  outcome_report_checker checker;
  const sim::finding expected{
      "I4",
      "I4: prefill rank 0 told decode rank 1 at step 6 that room 7/gen 0 ended chunk_ready "
      "while its transfer submitted at step 4 was still running (the report is the end of the "
      "request there)",
      {submitted, sent},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeReportChecker, FiresOnASecondReportToTheSameDecodeRank) {
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});
  const auto first = report(log.at(5), false);
  const auto second = log.at(7).decided(prefill, core::outcome_reported{request_a, decode, false});
  outcome_report_checker checker;
  const sim::finding expected{
      "I4",
      "I4: prefill rank 0 told decode rank 1 at step 7 that room 7/gen 0 ended chunk_ready, but "
      "it had told it chunk_ready at step 5 (one report per request and decode rank)",
      {first, second},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeReportChecker, FiresWhenRequestFinishedDisagreesWithTheReport) {
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});
  log.decided(prefill, core::ack_target_registered{request_a, decode, 5});
  const auto sent = report(log.at(6), true);
  const auto finished = log.at(8).decided(
      prefill, core::request_finished{request_a, core::request_outcome::succeeded});
  outcome_report_checker checker;
  const sim::finding expected{
      "I4",
      "I4: prefill rank 0 finished room 7/gen 0 at step 8 as succeeded, but had told decode "
      "Failed at step 6",
      {sent, finished},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(OutcomeReportChecker, FiresOnAReportOnTheWireThatTheSenderNeverDecided) {
  event_builder log;
  log.decided(prefill, core::room_opened{request_a});
  report(log, false);
  const auto again = log.at(9).add(
      sim::message_sent{70, prefill, decode, control_kind::chunk_ready, request_a, false});
  outcome_report_checker checker;
  const sim::finding expected{
      "I4",
      "I4: prefill rank 0 sent decode rank 1 chunk_ready about room 7/gen 0 at step 9, a report "
      "its sender never decided",
      {again},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);

  event_builder other;
  other.decided(prefill, core::room_opened{request_a});
  other.decided(prefill, core::ack_target_registered{request_a, decode, 5});
  other.decided(prefill, core::outcome_reported{request_a, decode, true});
  other.add(sim::message_sent{71, prefill, decode, control_kind::chunk_ready, request_a, false});
  outcome_report_checker second;
  const auto found = observe_all(second, other.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(found->message.find("(it decided Failed)"), std::string::npos) << found->message;
}

// --- quiet ------------------------------------------------------------------------------

TEST(OutcomeReportChecker, QuietOnHonestReports) {
  event_builder log;
  // Failed while a copy of a failed request still runs: decode drains before it frees.
  const room_key d{10, 0};
  log.decided(prefill, core::room_opened{d});
  log.add(sim::transfer_submitted{90, d, prefill, decode, {1}, {2}});
  log.add(sim::failure_injected{d, prefill});
  log.decided(prefill, core::outcome_reported{d, decode, true});
  // Succeeded: every transfer ended, chunk_ready to each decode rank once, then finished.
  log.decided(prefill, core::room_opened{request_a});
  submit(log, 3);
  end(log, 3);
  report(log, false, 1);
  report(log, false, 2);
  log.decided(prefill, core::request_finished{request_a, core::request_outcome::succeeded});
  // Aborted before it opened: the tombstone's Failed has its cause.
  const room_key b{8, 0};
  log.decided(prefill, core::ack_target_registered{b, decode, 9});
  log.decided(prefill, core::room_closed{b, 0, true});
  log.decided(prefill, core::outcome_reported{b, decode, true});
  log.add(sim::message_sent{40, prefill, decode, control_kind::status, b, false});
  // chunk_ready decided, then an ABORT accepted before the message is on the wire: the
  // decision was right when it was made, and the wire carries what was decided.
  const room_key c{11, 0};
  log.decided(prefill, core::room_opened{c});
  log.decided(prefill, core::outcome_reported{c, decode, false});
  log.decided(prefill, core::ack_target_registered{c, decode, 12});
  log.add(sim::message_sent{41, prefill, decode, control_kind::chunk_ready, c, false});
  log.decided(prefill, core::request_finished{c, core::request_outcome::aborted});
  outcome_report_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(OutcomeReportChecker, QuietOnTheAdversarysMessagesAndOnWorldsWithoutASender) {
  event_builder log;
  // An injected replay of a report, and a forged Failed: the adversary's, not prefill's.
  log.decided(prefill, core::room_opened{request_a});
  report(log, false);
  log.add(sim::message_sent{60, prefill, decode, control_kind::chunk_ready, request_a, true});
  log.add(sim::message_sent{61, prefill, decode, control_kind::status, request_a, true});
  // A world whose prefill reports by hand (no room of its core): not this checker's business.
  const room_key c{9, 0};
  log.add(sim::message_sent{50, prefill, decode, control_kind::status, c, false});
  outcome_report_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::outcome_report_checker_test
