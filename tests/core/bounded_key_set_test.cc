#include "core/bounded_key_set.h"

#include <gtest/gtest.h>

namespace kvsim::core::bounded_key_set_test {
namespace {

TEST(BoundedKeySet, AFullSetEvictsTheKeyInsertedFirstAndSaysWhich) {
  bounded_key_set set(2);
  EXPECT_FALSE(set.insert({1, 0}));
  EXPECT_FALSE(set.insert({2, 0}));
  EXPECT_FALSE(set.insert({1, 0})) << "a key already there keeps its place";
  EXPECT_EQ(set.insert({3, 0}), (room_key{1, 0}));
  EXPECT_FALSE(set.contains({1, 0}));
  EXPECT_TRUE(set.contains({2, 0}));
  EXPECT_TRUE(set.contains({3, 0}));
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.capacity(), 2u);
}

TEST(BoundedKeySet, AnErasedKeyFreesItsPlace) {
  bounded_key_set set(2);
  (void)set.insert({1, 0});
  (void)set.insert({2, 0});
  EXPECT_TRUE(set.erase({1, 0}));
  EXPECT_FALSE(set.erase({1, 0}));
  EXPECT_FALSE(set.insert({3, 0})) << "room was made by the erase";
  EXPECT_EQ(set.insert({4, 0}), (room_key{2, 0}));
}

TEST(BoundedKeySet, EraseOlderTakesOnlyOlderGenerationsOfThatRoom) {
  bounded_key_set set(8);
  for (const room_key key : {room_key{5, 0}, room_key{5, 1}, room_key{5, 3}, room_key{6, 0},
                             room_key{4, 2}}) {
    (void)set.insert(key);
  }
  EXPECT_EQ(set.erase_older(5, 3), (std::vector<room_key>{{5, 0}, {5, 1}}));
  EXPECT_TRUE(set.contains({5, 3}));
  EXPECT_TRUE(set.contains({6, 0}));
  EXPECT_TRUE(set.contains({4, 2}));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_FALSE(set.insert({7, 0}));  // the order index lost them too: no phantom eviction
  EXPECT_EQ(set.size(), 4u);
}

TEST(BoundedKeySetDeathTest, AZeroCapacityRefusesToExist) {
  EXPECT_DEATH(bounded_key_set(0), "at least one key");
}

}  // namespace
}  // namespace kvsim::core::bounded_key_set_test
