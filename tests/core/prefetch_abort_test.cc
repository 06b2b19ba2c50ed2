#include "core/prefetch_abort.h"

#include <gtest/gtest.h>

#include "tests/support/recording_sink.h"

namespace kvsim::core::prefetch_abort_test {
namespace {

using testing::recording_sink;

// A group of one: its collectives return at once.
class lone_group : public collective {
 public:
  std::uint32_t group_size() const override { return 1; }
  std::uint32_t group_rank() const override { return 0; }
  std::int64_t all_reduce(std::int64_t value, reduce_op) override { return value; }
  void barrier() override {}
};

// A storage read that ends only when someone waits for it; every poll of it is counted.
class counted_storage : public storage_io {
 public:
  storage_handle read_pages(room_key, const std::vector<page_index>&) override { return 1; }
  storage_poll poll(storage_handle) override {
    ++polls;
    return ended ? storage_poll::completed : storage_poll::in_flight;
  }
  storage_poll wait(storage_handle) override {
    ++waits;
    ended = true;
    return storage_poll::completed;
  }
  bool ended = false;
  std::uint32_t polls = 0;
  std::uint32_t waits = 0;
};

// A former defect: the drain of an active prefetch spun on poll() until the read returned,
// burning the owner thread. Now it blocks in the port's wait(). Before the fix this test hung in
// the drain (the read above ends only when waited for), so ctest's timeout failed it.
TEST(PrefetchAbort, AnActiveRanksDrainWaitsOnTheReadAndNeverSpins) {
  recording_sink sink;
  lone_group group;
  counted_storage storage;
  prefetch_abort_coordinator coordinator(0, {group, storage, sink}, variant::safe());
  const room_key key{3, 0};
  coordinator.register_pending(key, {4, 5});
  coordinator.start_io(key);
  coordinator.release_aborted_request(key);
  EXPECT_EQ(storage.waits, 1u);
  EXPECT_EQ(storage.polls, 0u);
  const auto drained = sink.last<prefetch_drained>();
  ASSERT_TRUE(drained.has_value());
  EXPECT_TRUE(drained->read_completed);
  EXPECT_EQ(coordinator.local_state(key), prefetch_state::missing);
}

}  // namespace
}  // namespace kvsim::core::prefetch_abort_test
