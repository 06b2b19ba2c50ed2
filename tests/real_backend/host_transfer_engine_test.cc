// The host data plane's transfer engine places copies as the CUDA engine does (copy_lanes.h),
// with real worker threads and gates that really wait: another request's transfers land while
// a gate holds, and a gate stands before the request's page counted over all its transfers,
// as in the simulator (not before that page of each transfer).
#include "real_backend/host/host_transfer_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "real_backend/host/host_data_plane.h"
#include "tests/real_backend/eventually.h"

namespace kvsim::real::host_transfer_engine_test {
namespace {

using namespace std::chrono_literals;

using testing::eventually;

TEST(HostTransferEngine, UngatedTransfersLandWhileAGateHolds) {
  host_data_plane plane;
  const auto source = plane.make_pages(0, 16, 4096);
  const auto destination = plane.make_pages(1, 16, 4096);
  const auto engine = plane.make_transfer_engine(0, *source, {{1, destination.get()}});
  const core::room_key a{42, 0};
  const core::room_key b{43, 0};
  const auto gate = plane.make_gate();
  engine->hold(a, *gate, 0);
  const core::transfer_handle held = engine->submit({a, 1, {0}, {0}});
  ASSERT_TRUE(eventually([&] { return gate->reached(); }));
  for (std::uint32_t j = 0; j < 8; ++j) source->write_canary(1 + j, b, j);
  std::vector<core::transfer_handle> others;
  for (std::uint32_t j = 0; j < 8; ++j) others.push_back(engine->submit({b, 1, {1 + j}, {1 + j}}));
  for (std::uint32_t j = 0; j < 8; ++j) {
    EXPECT_TRUE(eventually([&] { return engine->poll(others[j]) == core::transfer_poll::succeeded; },
                           5'000ms))
        << "transfer " << j + 2 << " of the engine waited behind A's gate";
    EXPECT_TRUE(destination->verify(1 + j, b, j).intact) << j;
  }
  EXPECT_EQ(engine->poll(held), core::transfer_poll::in_flight);
  gate->open();
  ASSERT_TRUE(eventually([&] { return engine->poll(held) == core::transfer_poll::succeeded; }));
}

TEST(HostTransferEngine, AGateStandsBeforeTheRequestsPage) {
  host_data_plane plane;
  const auto source = plane.make_pages(0, 8, 4096);
  const auto destination = plane.make_pages(1, 8, 4096);
  const auto engine = plane.make_transfer_engine(0, *source, {{1, destination.get()}});
  const core::room_key a{42, 0};
  for (std::uint32_t j = 0; j < 4; ++j) source->write_canary(j, a, j);
  const auto gate = plane.make_gate();
  engine->hold(a, *gate, 3);
  const core::transfer_handle first = engine->submit({a, 1, {0, 1}, {4, 5}});
  const core::transfer_handle second = engine->submit({a, 1, {2, 3}, {6, 7}});
  ASSERT_TRUE(eventually([&] { return gate->reached(); })) << "no gate in the request's page 3";
  ASSERT_TRUE(eventually([&] { return engine->poll(first) == core::transfer_poll::succeeded; }));
  EXPECT_TRUE(destination->verify(6, a, 2).intact) << "page 2 lands before the gate";
  EXPECT_FALSE(destination->verify(7, a, 3).intact) << "page 3 waits at the gate";
  const std::vector<held_transfer> held = engine->held_at(*gate);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].handle, second);
  EXPECT_EQ(held[0].before_page, 1u);
  gate->open();
  ASSERT_TRUE(eventually([&] { return engine->poll(second) == core::transfer_poll::succeeded; }));
  EXPECT_TRUE(destination->verify(7, a, 3).intact);
}

}  // namespace
}  // namespace kvsim::real::host_transfer_engine_test
