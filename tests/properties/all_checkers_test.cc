#include "properties/all_checkers.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/search/random_walk.h"
#include "sim/world.h"
#include "tests/properties/event_builder.h"

namespace kvsim::properties::all_checkers_test {
namespace {

using core::room_key;
using sim::random_walk;
using sim::run_end;
using sim::world;
using sim::world_config;

const room_key request_a{7, 0};

TEST(CheckerSet, OwnsOneCheckerPerInvariantEachWithItsOwnName) {
  checker_set checkers(500, 10'000);
  const std::set<std::string> names{checkers.use_after_free.name(),
                                    checkers.ack_after_drain.name(),
                                    checkers.release_after_acks.name(),
                                    checkers.closed_room.name(),
                                    checkers.host_pages.name(),
                                    checkers.data_integrity.name(),
                                    checkers.leak.name(),
                                    checkers.prefetch_leak.name(),
                                    checkers.liveness.name()};
  EXPECT_EQ(names.size(), 9u);
  EXPECT_EQ(checkers.liveness.heal_from_us(), 500u);
  EXPECT_EQ(checkers.liveness.bound_us(), 10'000u);
}

TEST(CheckerSet, AWorldWithTheSetAttachedStaysQuietOnACleanRun) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  checker_set checkers(0, 1'000);
  checkers.attach(w);
  w.spawn({0, "sender", 0}, [&w] {
    w.core_sink().emit(core::event{0, core::room_opened{request_a}});
    w.step();
    // A failure of the rank's own is why the request ends aborted (the outcome checker asks
    // for a cause).
    w.emit(sim::failure_injected{request_a, 0});
    w.core_sink().emit(core::event{0, core::room_closed{request_a, 0, false}});
    w.core_sink().emit(core::event{0, core::drain_ack_sent{request_a, 1, 77, true, 0}});
    w.core_sink().emit(
        core::event{0, core::request_finished{request_a, core::request_outcome::aborted}});
  });
  EXPECT_EQ(w.run().end, run_end::quiescent);
  EXPECT_EQ(w.found(), std::nullopt);
}

TEST(CheckerSet, AttachedCheckersSeeTheWorldsEvents) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  checker_set checkers(0, 1'000);
  checkers.attach(w);
  w.spawn({1, "reader", 0}, [&w] {
    w.step();
    w.emit(sim::page_read{1, 3, request_a, 0, false, std::nullopt});
  });
  EXPECT_EQ(w.run().end, run_end::finding);
  ASSERT_TRUE(w.found().has_value());
  EXPECT_EQ(w.found()->invariant, "I7");
}

TEST(CheckerSet, AttachedCheckersAreAskedAtQuiescence) {
  random_walk chooser(1);
  world w(chooser, world_config{});
  checker_set checkers(0, 1'000'000);
  checkers.attach(w);
  w.spawn({0, "sender", 0}, [&w] {
    w.core_sink().emit(core::event{0, core::room_opened{request_a}});
  });
  EXPECT_EQ(w.run().end, run_end::finding);
  ASSERT_TRUE(w.found().has_value());
  EXPECT_EQ(w.found()->message, "I9: room 7/gen 0 on rank 0 started at t=0us never finished");
}

}  // namespace
}  // namespace kvsim::properties::all_checkers_test
