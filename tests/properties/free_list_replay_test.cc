// hands_out() is next()'s comparison without the list: the ledger audit asks it at every
// allocation, and a disagreement would hide an out-of-order ledger (I8) or invent one.
#include "properties/free_list_replay.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

namespace kvsim::properties::free_list_replay_test {
namespace {

using core::allocation_order;
using core::page_index;

TEST(FreeListReplay, AFreshPoolHandsOutPageZeroFirstEitherWay) {
  for (const auto order : {allocation_order::lifo, allocation_order::fifo}) {
    const free_list_replay list(4, order);
    EXPECT_EQ(list.next(2), (std::vector<page_index>{0, 1}));
    EXPECT_TRUE(list.hands_out({0, 1}));
    EXPECT_FALSE(list.hands_out({1, 0}));
    EXPECT_FALSE(list.hands_out({0, 1, 2, 3, 4})) << "more than the pool";
  }
}

RC_GTEST_PROP(FreeListReplay, HandsOutAgreesWithNextAfterAnyHistory,
              (bool lifo, std::vector<std::uint8_t> frees, std::vector<std::uint8_t> asked)) {
  free_list_replay list(6, lifo ? allocation_order::lifo : allocation_order::fifo);
  list.taken(list.next(4));
  for (const std::uint8_t f : frees) list.freed(f % 6);
  std::vector<page_index> pages;
  for (const std::uint8_t a : asked) pages.push_back(a % 8);
  const std::vector<page_index> expected = list.next(static_cast<std::uint32_t>(pages.size()));
  RC_ASSERT(list.hands_out(pages) == (pages == expected));
  // And the list itself, asked for exactly what it would hand out.
  RC_ASSERT(list.hands_out(expected) || expected.size() != pages.size());
}

}  // namespace
}  // namespace kvsim::properties::free_list_replay_test
