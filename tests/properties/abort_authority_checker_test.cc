#include "properties/abort_authority_checker.h"

#include <gtest/gtest.h>

#include <optional>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::abort_authority_checker_test {
namespace {

using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request

// --- fires ------------------------------------------------------------------------------

TEST(AbortAuthorityChecker, FiresOnATargetWhoseTokenWasNeverChecked) {
  // prefill_sender::on_abort without its verifier call: decode's genuine token, never checked.
  event_builder log;
  const auto issued = log.at(3).decided(1, core::token_issued{request_a, 4});
  const auto target = log.at(6).decided(0, core::ack_target_registered{request_a, 1, 4});

  abort_authority_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 registered a drain-ACK target for room 7/gen 0 (decode rank 1, nonce 4) at "
      "step 6 but rank 0's verifier never accepted it",
      {issued, target},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AbortAuthorityChecker, FiresOnAnArmingThatNamesAnotherRanksToken) {
  // Each prefill rank gets its own token; the arming names the first expected rank's.
  event_builder log;
  const auto to_0 = log.at(3).decided(1, core::token_issued{request_a, 4, 0});
  log.decided(1, core::token_issued{request_a, 5, 2});
  const auto armed = log.at(6).decided(1, core::abort_armed{request_a, {0, 2}, 5, std::nullopt});
  abort_authority_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 1 armed the abort of room 7/gen 0 at step 6 naming nonce 5 for rank 0, but the "
      "token it issued that rank at step 3 has nonce 4",
      {to_0, armed},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);

  event_builder right;
  right.decided(1, core::token_issued{request_a, 4, 0});
  right.decided(1, core::token_issued{request_a, 5, 2});
  right.decided(1, core::abort_armed{request_a, {0, 2}, 4, std::nullopt});
  abort_authority_checker quiet;
  EXPECT_EQ(observe_all(quiet, right.events()), std::nullopt);
}

TEST(AbortAuthorityChecker, FiresOnATokenDecodeNeverIssued) {
  // A verifier that lets a tampered nonce through: accepted, but nobody issued it.
  event_builder log;
  log.at(3).decided(1, core::token_issued{request_a, 4});
  log.decided(0, core::token_accepted{request_a, 5, 1, 1});
  const auto target = log.at(6).decided(0, core::ack_target_registered{request_a, 1, 5});

  abort_authority_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0 registered a drain-ACK target for room 7/gen 0 (decode rank 1, nonce 5) at "
      "step 6 but rank 1 never issued that token",
      {target},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AbortAuthorityChecker, FiresOnAnOldGenerationsTokenForTheReusedRoom) {
  event_builder log;
  log.decided(1, core::token_issued{request_a, 4});
  log.decided(0, core::token_accepted{request_a, 4, 1, 1});
  log.decided(0, core::ack_target_registered{request_b, 1, 4});
  abort_authority_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->invariant, "I2");
}

TEST(AbortAuthorityChecker, FiresWhenAnotherRankAcceptedIt) {
  event_builder log;
  log.decided(2, core::token_issued{request_a, 4});
  log.decided(1, core::token_accepted{request_a, 4, 2, 2});  // prefill rank 1 checked it
  log.decided(0, core::ack_target_registered{request_a, 2, 4});  // rank 0 did not
  abort_authority_checker checker;
  EXPECT_TRUE(observe_all(checker, log.events()).has_value());
}

TEST(AbortAuthorityChecker, FiresOnATokenAcceptedFromARankThatDidNotIssueIt) {
  event_builder log;
  log.decided(1, core::token_issued{request_a, 4, 0});
  const auto relayed = log.at(5).decided(0, core::token_accepted{request_a, 4, 1, 2, 0});
  abort_authority_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0's verifier accepted the token of room 7/gen 0 (issuer rank 1, audience rank 0, "
      "nonce 4) from rank 2 at step 5: a token is good only between its issuer and its audience",
      {relayed},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

// An attack the token's MAC once allowed, as the decode rank's verifier would have taken it:
// prefill rank 3 echoes the token decode rank 1 made for prefill rank 0, as if it were its own
// drain-ACK.
TEST(AbortAuthorityChecker, FiresOnAnAckEchoedByAPeerTheTokenWasNotFor) {
  event_builder log;
  log.decided(1, core::token_issued{request_a, 4, 0});
  const auto echoed = log.at(6).decided(1, core::token_accepted{request_a, 4, 1, 3, 0});
  abort_authority_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{echoed});
  EXPECT_NE(found->message.find("between its issuer and its audience"), std::string::npos);
}

TEST(AbortAuthorityChecker, FiresOnATokenAcceptedTwiceFromOnePresenter) {
  event_builder log;
  log.decided(1, core::token_issued{request_a, 4, 0});
  const auto first = log.at(4).decided(0, core::token_accepted{request_a, 4, 1, 1, 0});
  const auto again = log.at(9).decided(0, core::token_accepted{request_a, 4, 1, 1, 0});
  abort_authority_checker checker;
  const sim::finding expected{
      "I2",
      "I2: rank 0's verifier accepted the token of room 7/gen 0 (issuer rank 1, audience rank 0, "
      "nonce 4) from rank 1 a second time at step 9 (first at step 4): a replayed message must "
      "be refused",
      {first, again},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(AbortAuthorityChecker, FiresOnARefusalWhoseKeysSayAnotherReason) {
  event_builder log;
  // Expected and claimed swapped in the report: the older generation named as the expected one.
  const auto refused = log.at(4).decided(
      0, core::token_rejected{request_a, request_b, 3, core::token_rejection::stale_generation});
  abort_authority_checker checker;
  const sim::finding expected{"I2",
                              "I2: rank 0's verifier refused a token as stale_generation at step "
                              "4, but it claims room 7/gen 1 where room 7/gen 0 was expected",
                              {refused},
                              {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

// --- quiet ------------------------------------------------------------------------------

TEST(AbortAuthorityChecker, QuietOnAnIssuedAndAcceptedToken) {
  event_builder log;
  log.decided(1, core::token_issued{request_a, 4, 0});
  log.decided(0, core::token_accepted{request_a, 4, 1, 1, 0});
  log.decided(0, core::ack_target_registered{request_a, 1, 4});
  log.decided(2, core::token_issued{request_b, 1, 0});
  log.decided(0, core::token_accepted{request_b, 1, 2, 2, 0});
  // Decode rank 1 hears its tokens back from the two prefill ranks they were made for.
  log.decided(1, core::token_issued{request_a, 5, 3});
  log.decided(1, core::token_accepted{request_a, 4, 1, 0, 0});
  log.decided(1, core::token_accepted{request_a, 5, 1, 3, 3});
  log.decided(0, core::token_rejected{request_b, request_a, 4, core::token_rejection::stale_generation});
  log.decided(0, core::token_rejected{request_a, request_b, 4, core::token_rejection::future_generation});
  log.decided(0, core::token_rejected{request_a, {8, 0}, 4, core::token_rejection::foreign_room});
  log.decided(0, core::token_rejected{request_a, request_a, 4, core::token_rejection::duplicate});
  log.decided(0, core::token_rejected{request_a, {1, 2}, 4, core::token_rejection::forged});
  log.decided(0, core::ack_target_registered{request_b, 2, 1});
  abort_authority_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::abort_authority_checker_test
