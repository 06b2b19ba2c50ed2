#include "sim/sim_events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvsim::sim::sim_events_test {
namespace {

const std::vector<actor_name> actors{{0, "prefill", 0}, {1, "decode", 0}};
constexpr actor_id decode_actor = 1;
const core::room_key request_a{7, 0};
const core::room_key request_b{8, 2};

sim_event at(std::uint64_t step, std::uint64_t time_us, actor_id actor, sim_event_body body) {
  return sim_event{step, time_us, actor, std::move(body)};
}

TEST(SimEventsDescribe, PageReadNamesTheActorAndEveryField) {
  const auto e = at(12, 40, decode_actor, page_read{1, 3, request_a, 0, true, std::nullopt});
  EXPECT_EQ(describe(e, actors),
            "step 12 t=40us r1.decode.0 page_read rank=1 page=3 reader=room 7/gen 0 logical=0 "
            "intact");
}

TEST(SimEventsDescribe, CorruptPageReadSaysWhoseBytesItFound) {
  const auto e = at(13, 41, decode_actor, page_read{1, 3, request_a, 2, false, request_b});
  EXPECT_EQ(describe(e, actors),
            "step 13 t=41us r1.decode.0 page_read rank=1 page=3 reader=room 7/gen 0 logical=2 "
            "corrupt found=room 8/gen 2");
}

TEST(SimEventsDescribe, CoreDecisionsUseTheCoreDescription) {
  const core::event what{1,
                         core::lease_started{3, request_a, core::lease_role::destination, {4, 5}}};
  const auto e = at(2, 0, decode_actor, core_decided{what});
  EXPECT_EQ(describe(e, actors), "step 2 t=0us r1.decode.0 core_decided " + core::describe(what));
  EXPECT_EQ(describe(e, actors),
            "step 2 t=0us r1.decode.0 core_decided rank 1 lease_started lease=3 room 7/gen 0 "
            "destination [4,5]");
}

TEST(SimEventsDescribe, TheWorldAndUnknownActorsAreNamed) {
  EXPECT_EQ(describe(at(5, 9, no_actor, message_delivered{4, 1}), actors),
            "step 5 t=9us world message_delivered message=4 to=1");
  EXPECT_EQ(describe(at(5, 9, 17, message_dropped{4}), actors),
            "step 5 t=9us actor#17 message_dropped message=4");
}

TEST(SimEventsDescribe, EveryKindOfEventPrintsAllItsFields) {
  const std::vector<std::pair<sim_event_body, std::string>> cases{
      {actor_started{{2, "worker", 1}}, "actor_started name=r2.worker.1"},
      {actor_finished{true}, "actor_finished cancelled"},
      {actor_finished{false}, "actor_finished returned"},
      {collective_entered{3, 7, 1, collective_op::all_reduce_max, -5},
       "collective_entered group=3 seq=7 rank=1 op=all_reduce_max value=-5"},
      {collective_left{3, 7, 1, 9}, "collective_left group=3 seq=7 rank=1 result=9"},
      {transfer_submitted{11, request_a, 0, 1, {1, 2}, {3, 4}},
       "transfer_submitted transfer=11 room 7/gen 0 rank 0 [1,2] -> rank 1 [3,4]"},
      {transfer_page_copied{11, request_a, 0, 2, 1, 4},
       "transfer_page_copied transfer=11 room 7/gen 0 rank 0 page 2 -> rank 1 page 4"},
      {transfer_ended{11, request_a, core::transfer_poll::failed},
       "transfer_ended transfer=11 room 7/gen 0 outcome=failed"},
      {transfer_timed_out{11, request_a, true},
       "transfer_timed_out transfer=11 room 7/gen 0 still_running"},
      {page_written{1, 3, request_b, 5},
       "page_written rank=1 page=3 writer=room 8/gen 2 logical=5"},
      {message_sent{4, 0, 1, core::control_kind::abort_ack, request_a},
       "message_sent message=4 from=0 to=1 kind=abort_ack room 7/gen 0"},
      {fault_fired{"drop message 4"}, "fault_fired drop message 4"},
      {gate_changed{"before_release", true}, "gate_changed gate=before_release open"},
  };
  for (const auto& [body, expected] : cases) {
    EXPECT_EQ(describe(at(1, 2, 0, body), actors), "step 1 t=2us r0.prefill.0 " + expected);
  }
}

TEST(SimEventsDescribe, FreeTextCannotBreakTheOneLinePromise) {
  const auto line = describe(at(1, 2, no_actor, fault_fired{"two\nlines\tand\x01"}), actors);
  EXPECT_EQ(line, "step 1 t=2us world fault_fired two\\nlines\\tand\\x01");
}

TEST(CollectiveOp, EveryOpHasAName) {
  EXPECT_STREQ(to_string(collective_op::all_reduce_min), "all_reduce_min");
  EXPECT_STREQ(to_string(collective_op::all_reduce_max), "all_reduce_max");
  EXPECT_STREQ(to_string(collective_op::barrier), "barrier");
}

}  // namespace
}  // namespace kvsim::sim::sim_events_test
