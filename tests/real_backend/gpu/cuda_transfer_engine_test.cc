// Gated copies on the GPU: a gate kernel holds a transfer in flight on its stream after the
// pages before it landed; other streams go on; opening the gate lets the rest land.
#include "real_backend/cuda/cuda_transfer_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "real_backend/cuda/cuda_gate.h"
#include "real_backend/cuda/cuda_page_pool.h"
#include "tests/real_backend/gpu/gpu_test_support.h"
#include "tests/real_backend/eventually.h"

namespace kvsim::real::cuda_transfer_engine_test {
namespace {

using namespace std::chrono_literals;

using testing::eventually;

void copies_are_held_then_land(int source_device, int destination_device) {
  cuda_page_pool source(source_device, 8, 4096);
  cuda_page_pool destination(destination_device, 8, 4096);
  cuda_transfer_engine engine(0, source, {{1, &destination}});
  const core::room_key a{42, 0};
  const core::room_key b{43, 0};
  for (std::uint32_t j = 0; j < 3; ++j) source.write_canary(j, a, j);
  source.write_canary(5, b, 0);
  cuda_gate gate;
  engine.hold(a, gate, 1);
  const core::transfer_handle held = engine.submit({a, 1, {0, 1, 2}, {4, 5, 6}});
  ASSERT_TRUE(eventually([&] { return gate.reached(); })) << "the gate kernel never ran";
  EXPECT_EQ(engine.poll(held), core::transfer_poll::in_flight);
  EXPECT_FALSE(engine.cancel(held)) << "queued device work cannot be withdrawn";
  EXPECT_TRUE(destination.verify(4, a, 0).intact) << "the page before the gate has landed";
  EXPECT_FALSE(destination.verify(5, a, 1).intact) << "the page after it has not";
  ASSERT_EQ(engine.held_at(gate).size(), 1u);
  // Another request's transfer on another worker stream is not held.
  const core::transfer_handle free_running = engine.submit({b, 1, {5}, {0}});
  ASSERT_TRUE(
      eventually([&] { return engine.poll(free_running) == core::transfer_poll::succeeded; }));
  EXPECT_TRUE(destination.verify(0, b, 0).intact);
  EXPECT_EQ(engine.poll(held), core::transfer_poll::in_flight);
  gate.open();
  ASSERT_TRUE(eventually([&] { return engine.poll(held) == core::transfer_poll::succeeded; }));
  for (std::uint32_t j = 0; j < 3; ++j) EXPECT_TRUE(destination.verify(4 + j, a, j).intact) << j;
  const std::vector<ended_transfer> ended = engine.take_ended();
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[1].handle, held);
  EXPECT_EQ(ended[1].first_unconfirmed_page, 1u);
  EXPECT_TRUE(engine.cancel(held));
}

// Once, round-robin streams put the fifth transfer behind the gate kernel, where it waited
// until the gate opened. Every transfer of another request now lands while the gate holds.
TEST(CudaTransferEngine, UngatedTransfersLandWhileAGateHolds) {
  KVSIM_REQUIRE_GPU();
  cuda_page_pool source(0, 16, 4096);
  cuda_page_pool destination(0, 16, 4096);
  cuda_transfer_engine engine(0, source, {{1, &destination}});
  const core::room_key a{42, 0};
  const core::room_key b{43, 0};
  cuda_gate gate;
  engine.hold(a, gate, 0);
  const core::transfer_handle held = engine.submit({a, 1, {0}, {0}});
  ASSERT_TRUE(eventually([&] { return gate.reached(); }));
  for (std::uint32_t j = 0; j < 8; ++j) source.write_canary(1 + j, b, j);
  std::vector<core::transfer_handle> others;
  for (std::uint32_t j = 0; j < 8; ++j) others.push_back(engine.submit({b, 1, {1 + j}, {1 + j}}));
  for (std::uint32_t j = 0; j < 8; ++j) {
    EXPECT_TRUE(eventually([&] { return engine.poll(others[j]) == core::transfer_poll::succeeded; },
                           2'000ms))
        << "transfer " << j + 2 << " of the engine waited behind A's gate";
    EXPECT_TRUE(destination.verify(1 + j, b, j).intact) << j;
  }
  EXPECT_EQ(engine.poll(held), core::transfer_poll::in_flight);
  gate.open();
  ASSERT_TRUE(eventually([&] { return engine.poll(held) == core::transfer_poll::succeeded; }));
}

// The gate counts the request's pages over its transfers, as in the simulator: before page 3
// of a request sent as two chunks of two pages, it holds the second chunk's second page.
TEST(CudaTransferEngine, AGateStandsBeforeTheRequestsPage) {
  KVSIM_REQUIRE_GPU();
  cuda_page_pool source(0, 8, 4096);
  cuda_page_pool destination(0, 8, 4096);
  cuda_transfer_engine engine(0, source, {{1, &destination}});
  const core::room_key a{42, 0};
  for (std::uint32_t j = 0; j < 4; ++j) source.write_canary(j, a, j);
  cuda_gate gate;
  engine.hold(a, gate, 3);
  const core::transfer_handle first = engine.submit({a, 1, {0, 1}, {4, 5}});
  const core::transfer_handle second = engine.submit({a, 1, {2, 3}, {6, 7}});
  ASSERT_TRUE(eventually([&] { return gate.reached(); })) << "no gate in the request's page 3";
  ASSERT_TRUE(eventually([&] { return engine.poll(first) == core::transfer_poll::succeeded; }));
  EXPECT_TRUE(destination.verify(6, a, 2).intact) << "page 2 lands before the gate";
  EXPECT_FALSE(destination.verify(7, a, 3).intact) << "page 3 waits at the gate";
  const std::vector<held_transfer> held = engine.held_at(gate);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].handle, second);
  EXPECT_EQ(held[0].before_page, 1u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return engine.poll(second) == core::transfer_poll::succeeded; }));
  EXPECT_TRUE(destination.verify(7, a, 3).intact);
}

TEST(CudaTransferEngine, AGateHoldsACopyOnTheDeviceUntilOpened) {
  KVSIM_REQUIRE_GPU();
  copies_are_held_then_land(0, 0);
}

TEST(CudaTransferEngine, PeerCopiesBetweenTwoDevicesAreHeldTheSameWay) {
  KVSIM_REQUIRE_GPU();
  if (testing::gpu_probe().count < 2) GTEST_SKIP() << "one device: peer copies need two";
  copies_are_held_then_land(0, 1);
}

}  // namespace
}  // namespace kvsim::real::cuda_transfer_engine_test
