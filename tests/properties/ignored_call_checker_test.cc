// Calls the engine-facing core must ignore (misuse): a refusal of the room table inside the
// bracket is quiet; any other decision, or an answer "accepted", fires with the call, the
// decision and the answer as evidence.
#include "properties/ignored_call_checker.h"

#include <gtest/gtest.h>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::ignored_call_checker_test {
namespace {

using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key a{3, 1};

TEST(IgnoredCallChecker, QuietOnARefusedSendChunkAndOnOtherRanksDecisions) {
  event_builder log;
  log.add(sim::ignored_call_attempted{0, sim::ignored_call::send_chunk_closed_room, a});
  log.decided(0, core::lifetime_refused{core::lifetime_error::room_closed, a});
  log.decided(1, core::request_finished{a, core::request_outcome::aborted});  // another rank
  log.add(sim::ignored_call_answered{0, false});
  ignored_call_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

TEST(IgnoredCallChecker, FiresOnASecondAbortThatReArms) {
  event_builder log;
  const auto attempt = log.add(sim::ignored_call_attempted{2, sim::ignored_call::decode_abort, a});
  const auto armed = log.decided(2, core::abort_armed{a, {0}, 7, std::nullopt});
  const auto answer = log.add(sim::ignored_call_answered{2, false});
  ignored_call_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->invariant, "misuse");
  EXPECT_EQ(found->evidence, (std::vector<std::size_t>{attempt, armed, answer}));
  EXPECT_NE(found->message.find("careless decode_abort of room 3/gen 1 on rank 2 at step 3, a "
                                "call to ignore: the core decided"),
            std::string::npos)
      << found->message;
}

TEST(IgnoredCallChecker, FiresOnASendChunkAnsweredAsQueued) {
  event_builder log;
  log.add(sim::ignored_call_attempted{0, sim::ignored_call::send_chunk_no_siblings, a});
  log.add(sim::ignored_call_answered{0, true});
  ignored_call_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("the core accepted it"), std::string::npos);
}

}  // namespace
}  // namespace kvsim::properties::ignored_call_checker_test
