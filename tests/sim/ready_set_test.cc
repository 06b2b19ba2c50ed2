// The world's ready set lists the schedule options; their order (ascending ids) is part of
// every recorded decision, so the set must read exactly as the sorted list it replaced.
#include "sim/ready_set.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace kvsim::sim::ready_set_test {
namespace {

std::vector<actor_id> members(const ready_set& ready) {
  std::vector<actor_id> out;
  ready.for_each([&](actor_id id) { out.push_back(id); });
  return out;
}

TEST(ReadySet, ListsItsMembersInAscendingIdsAcrossWords) {
  ready_set ready;
  EXPECT_TRUE(ready.empty());
  for (const actor_id id : {130u, 3u, 64u, 63u, 0u}) ready.insert(id);
  EXPECT_EQ(members(ready), (std::vector<actor_id>{0, 3, 63, 64, 130}));
  EXPECT_EQ(ready.front(), 0u);
  EXPECT_EQ(ready.nth(3), 64u);
  EXPECT_EQ(ready.nth(4), 130u);
  ready.erase(0);
  ready.erase(64);
  EXPECT_EQ(ready.size(), 3u);
  EXPECT_EQ(ready.front(), 3u);
  EXPECT_EQ(members(ready), (std::vector<actor_id>{3, 63, 130}));
}

RC_GTEST_PROP(ReadySet, AgreesWithASortedSetOnAnyInsertsAndErases, (std::vector<std::uint8_t> ids)) {
  ready_set ready;
  std::set<actor_id> model;
  for (const std::uint8_t raw : ids) {
    const actor_id id = raw % 200;
    if (model.contains(id)) {
      ready.erase(id);
      model.erase(id);
    } else {
      ready.insert(id);
      model.insert(id);
    }
    RC_ASSERT(ready.size() == model.size());
    RC_ASSERT(members(ready) == std::vector<actor_id>(model.begin(), model.end()));
    std::size_t n = 0;
    for (const actor_id expected : model) RC_ASSERT(ready.nth(n++) == expected);
    if (!model.empty()) RC_ASSERT(ready.front() == *model.begin());
  }
}

TEST(ReadySetDeathTest, AnActorMadeReadyTwiceIsASimulatorBug) {
  ready_set ready;
  ready.insert(5);
  EXPECT_DEATH(ready.insert(5), "made ready twice");
  EXPECT_DEATH(ready.erase(6), "only a ready actor");
}

}  // namespace
}  // namespace kvsim::sim::ready_set_test
