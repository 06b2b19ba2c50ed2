// How a recording from real hardware and a simulator run state the order of the core's
// decisions (tools/kvsim/recording_order.h), which steers `kvsim replay --lenient` of a
// recording: the same decision is named alike on both sides, whatever page indices, lease ids
// and nonces each drew; and the fit says how far a run agrees with the recording.
#include "tools/kvsim/recording_order.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvsim::tools::recording_order_test {
namespace {

TEST(RecordingOrder, NamesADecisionByRankKindAndRequestOnly) {
  EXPECT_EQ(core_decision_name("rank 1 lease_started lease=1 room 42/gen 0 destination [0,1]"),
            "rank 1 lease_started room 42/gen 0");
  EXPECT_EQ(core_decision_name("rank 1 lease_started lease=7 room 42/gen 0 destination [5,3]"),
            "rank 1 lease_started room 42/gen 0");
  EXPECT_EQ(core_decision_name("rank 0 token_accepted room 42/gen 0 nonce=1 issuer=1"),
            core_decision_name("rank 0 token_accepted room 42/gen 0 nonce=9812 issuer=1"));
  EXPECT_NE(core_decision_name("rank 1 page_freed room 42/gen 0 page=0"),
            core_decision_name("rank 1 page_freed room 42/gen 1 page=0"));
  // No word "room" on its own: rank and kind.
  EXPECT_EQ(core_decision_name("rank 1 token_rejected retired expected=room 42/gen 0 nonce=1"),
            "rank 1 token_rejected");
}

TEST(RecordingOrder, ReadsTheCoreDecisionsOfATracesEventLog) {
  const std::vector<std::string> lines{
      "step 1 t=0us r1.decode.0 actor_started name=r1.decode.0",
      "step 1 t=0us r1.decode.0 core_decided rank 1 pages_allocated room 42/gen 0 [0,1]",
      "step 3 t=0us r1.decode.0 message_sent message=1 from=1 to=0 kind=metadata room 42/gen 0",
      "step 4 t=8397us r0.prefill.0 core_decided rank 0 room_opened room 42/gen 0"};
  EXPECT_EQ(core_order(lines), (std::vector<std::string>{"rank 1 pages_allocated room 42/gen 0",
                                                         "rank 0 room_opened room 42/gen 0"}));
}

TEST(RecordingOrder, FitCountsAgreementFromTheStartFollowedAndOwn) {
  const std::vector<std::string> recorded{"a", "b", "c", "d"};
  EXPECT_EQ(fit(recorded, {"a", "b"}), (order_fit{4, 2, 2, 0}));
  // b and c swapped: agrees for one, two in order, one of its own.
  EXPECT_EQ(fit(recorded, {"a", "c", "b"}), (order_fit{4, 1, 2, 1}));
  // Something the recording never did.
  EXPECT_EQ(fit(recorded, {"x", "a", "b", "c", "d"}), (order_fit{4, 0, 4, 1}));
  EXPECT_EQ(fit(recorded, {}), (order_fit{4, 0, 0, 0}));
}

TEST(RecordingOrder, BetterAgreesLongerThenHasLessOfItsOwnThenFollowsMore) {
  const order_fit long_agreement{10, 5, 5, 3};
  const order_fit short_agreement{10, 4, 9, 0};
  EXPECT_TRUE(long_agreement.better_than(short_agreement));
  EXPECT_FALSE(short_agreement.better_than(long_agreement));
  EXPECT_TRUE((order_fit{10, 4, 6, 1}).better_than(order_fit{10, 4, 8, 2}));
  EXPECT_TRUE((order_fit{10, 4, 8, 1}).better_than(order_fit{10, 4, 6, 1}));
  EXPECT_FALSE((order_fit{10, 4, 8, 1}).better_than(order_fit{10, 4, 8, 1}));
}

}  // namespace
}  // namespace kvsim::tools::recording_order_test
