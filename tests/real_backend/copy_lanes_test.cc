// Where the CUDA transfer engine queues its copies, checked on the host: ungated work never
// lands on a lane where a gate waits (plain round-robin put the fifth transfer behind one),
// and a gate stands before the request's page `before_page` counted over all of the
// request's transfers, as in the simulator (sim/sim_transfer_engine.h).
#include "real_backend/cuda/copy_lanes.h"

#include <gtest/gtest.h>

#include <set>

#include "real_backend/data_plane.h"

namespace kvsim::real::copy_lanes_test {
namespace {

class fake_gate final : public hold_gate {
 public:
  bool reached() const override { return false; }
  void open() override {}
  bool is_open() const override { return false; }
};

core::transfer_request pages_of(core::room_key owner, std::uint32_t count,
                                core::rank_id destination = 1) {
  core::transfer_request r{owner, destination, {}, {}};
  for (std::uint32_t i = 0; i < count; ++i) {
    r.source_pages.push_back(i);
    r.destination_pages.push_back(i);
  }
  return r;
}

const core::room_key a{42, 0};
const core::room_key b{43, 0};

TEST(CopyLanes, UngatedTransfersNeverQueueBehindAGate) {
  copy_lanes lanes(4);
  fake_gate gate;
  lanes.hold(a, gate, 0);
  const lane_placement held = lanes.place(pages_of(a, 2));
  ASSERT_TRUE(held.queues_gate);
  // Eight more transfers of another request: two rounds over every worker lane, and none on
  // the held one (round-robin over four put the fifth transfer there).
  std::set<std::size_t> used;
  for (int i = 0; i < 8; ++i) {
    const lane_placement p = lanes.place(pages_of(b, 1));
    EXPECT_NE(p.lane, held.lane) << "transfer " << i << " queued behind A's gate";
    EXPECT_EQ(p.gate, nullptr);
    used.insert(p.lane);
  }
  EXPECT_EQ(used.size(), 4u) << "the ungated transfers still spread over every worker lane";
  EXPECT_EQ(lanes.lanes(), 5u);
}

TEST(CopyLanes, EachHeldRequestAndDestinationHasALaneOfItsOwn) {
  copy_lanes lanes(2);
  fake_gate gate_a;
  fake_gate gate_b;
  lanes.hold(a, gate_a, 1);
  lanes.hold(b, gate_b, 1);
  const lane_placement a_to_1 = lanes.place(pages_of(a, 2, 1));
  const lane_placement b_to_1 = lanes.place(pages_of(b, 2, 1));
  const lane_placement a_to_2 = lanes.place(pages_of(a, 2, 2));
  const lane_placement a_to_1_again = lanes.place(pages_of(a, 1, 1));
  EXPECT_GE(a_to_1.lane, 2u);
  EXPECT_NE(a_to_1.lane, b_to_1.lane) << "B's pages before its gate wait behind A's gate";
  EXPECT_NE(a_to_1.lane, a_to_2.lane) << "each destination counts the request's pages apart";
  EXPECT_EQ(a_to_1_again.lane, a_to_1.lane) << "a request's transfers keep their order";
}

TEST(CopyLanes, AGateStandsBeforeTheRequestsPageNotTheTransfers) {
  // Gate before page 3 of the request; it arrives as chunks of 2 pages. The simulator holds
  // the second chunk before its second page; a per-transfer gate never holds anything (no
  // transfer has a page 3).
  copy_lanes lanes(4);
  fake_gate gate;
  lanes.hold(a, gate, 3);
  const lane_placement first = lanes.place(pages_of(a, 2));
  EXPECT_EQ(first.gate, nullptr) << "pages 0 and 1 land before the gate";
  EXPECT_FALSE(first.queues_gate);
  const lane_placement second = lanes.place(pages_of(a, 2));
  ASSERT_TRUE(second.queues_gate) << "page 3 of the request is the second chunk's page 1";
  EXPECT_EQ(second.gate, &gate);
  EXPECT_EQ(second.gate_before_page, 1u);
  EXPECT_EQ(second.lane, first.lane) << "in submit order behind the first chunk";
  // Later transfers of the request wait at the gate too, from their first page.
  const lane_placement third = lanes.place(pages_of(a, 2));
  EXPECT_EQ(third.gate, &gate);
  EXPECT_FALSE(third.queues_gate) << "one gate kernel per request";
  EXPECT_EQ(third.gate_before_page, 0u);
  EXPECT_EQ(third.lane, first.lane);
}

TEST(CopyLanes, AGateAtAChunkBoundaryHoldsTheNextChunkFromItsFirstPage) {
  copy_lanes lanes(4);
  fake_gate gate;
  lanes.hold(a, gate, 2);
  EXPECT_EQ(lanes.place(pages_of(a, 2)).gate, nullptr) << "it ends before the gate: it ends";
  const lane_placement next = lanes.place(pages_of(a, 2));
  ASSERT_TRUE(next.queues_gate);
  EXPECT_EQ(next.gate_before_page, 0u);
}

TEST(CopyLanes, AGateAfterTheRequestsLastPageHoldsNothing) {
  copy_lanes lanes(4);
  fake_gate gate;
  lanes.hold(a, gate, 5);
  EXPECT_EQ(lanes.place(pages_of(a, 3)).gate, nullptr);
  EXPECT_EQ(lanes.place(pages_of(a, 2)).gate, nullptr);
}

TEST(CopyLanes, AHoldCountsTheRequestsPagesFromThen) {
  copy_lanes lanes(4);
  fake_gate first_gate;
  fake_gate second_gate;
  lanes.hold(a, first_gate, 0);
  ASSERT_TRUE(lanes.place(pages_of(a, 2)).queues_gate);
  lanes.hold(a, second_gate, 1);
  const lane_placement p = lanes.place(pages_of(a, 2));
  ASSERT_TRUE(p.queues_gate) << "the new hold counts from its own start";
  EXPECT_EQ(p.gate, &second_gate);
  EXPECT_EQ(p.gate_before_page, 1u);
}

}  // namespace
}  // namespace kvsim::real::copy_lanes_test
