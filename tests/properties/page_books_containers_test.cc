// The containers under page_ownership's books must read exactly as the std::set and std::map
// they replaced (docs/performance.md): the checkers' messages and quiescence sweeps iterate
// them, so any difference in membership or order would change a finding's text.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "properties/dense_index_map.h"
#include "properties/lease_set.h"

namespace kvsim::properties::page_books_containers_test {
namespace {

// Unsigned values: the model-based test adds random ones, and unsigned sums wrap (defined),
// where int sums overflowed under UBSan.
using index_map = dense_index_map<std::uint32_t, std::uint32_t>;

std::vector<std::pair<std::uint32_t, std::uint32_t>> contents(const index_map& m) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const auto& [key, value] : m) out.emplace_back(key, value);
  return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> contents(const std::map<std::uint32_t, std::uint32_t>& m) {
  return {m.begin(), m.end()};
}

TEST(LeaseSet, InsertsEraseAndIteratesAsAStdSet) {
  lease_set leases;
  EXPECT_TRUE(leases.empty());
  EXPECT_TRUE(leases.insert(9));
  EXPECT_TRUE(leases.insert(3));
  EXPECT_TRUE(leases.insert(5));
  EXPECT_FALSE(leases.insert(5)) << "already there";
  EXPECT_EQ((std::vector<core::lease_id>(leases.begin(), leases.end())),
            (std::vector<core::lease_id>{3, 5, 9}));
  EXPECT_EQ(leases.erase(4), 0u);
  EXPECT_EQ(leases.erase(5), 1u);
  EXPECT_TRUE(leases.contains(9));
  EXPECT_FALSE(leases.contains(5));
  EXPECT_EQ(leases.size(), 2u);
}

RC_GTEST_PROP(LeaseSet, AgreesWithStdSetOnAnyOperations, (std::vector<std::pair<bool, std::uint8_t>> ops)) {
  lease_set ours;
  std::set<core::lease_id> theirs;
  for (const auto& [insert, id] : ops) {
    if (insert) {
      RC_ASSERT(ours.insert(id) == theirs.insert(id).second);
    } else {
      RC_ASSERT(ours.erase(id) == theirs.erase(id));
    }
    RC_ASSERT((std::vector<core::lease_id>(ours.begin(), ours.end())) ==
              (std::vector<core::lease_id>(theirs.begin(), theirs.end())));
  }
}

TEST(DenseIndexMap, NamesKeysOnlyThroughIndexingAndIteratesThemInOrder) {
  index_map m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find(3), m.end());
  m[7] = 70;
  m[2] = 20;
  m[index_map::dense_limit + 5] = 99;  // beyond the dense slots: still named, still in order
  m[index_map::dense_limit] = 98;
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(contents(m), (std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                             {2, 20}, {7, 70}, {index_map::dense_limit, 98}, {index_map::dense_limit + 5, 99}}));
  EXPECT_EQ(m.find(3), m.end()) << "a slot below a named key is not named";
  EXPECT_EQ(m.find(7)->second, 70);
  EXPECT_EQ(m.at(index_map::dense_limit + 5), 99);
  EXPECT_THROW((void)m.at(4), std::out_of_range);
  EXPECT_EQ(m[5], 0u) << "named by indexing, value-initialised";
  EXPECT_EQ(m.size(), 5u);
}

RC_GTEST_PROP(DenseIndexMap, AgreesWithStdMapOnAnyOperations,
              (std::vector<std::pair<std::uint8_t, std::uint32_t>> ops)) {
  index_map ours;
  std::map<std::uint32_t, std::uint32_t> theirs;
  for (const auto& [op, raw] : ops) {
    // Keys around the dense limit as well as small ones.
    const std::uint32_t key = raw % 2 == 0 ? raw % 64 : index_map::dense_limit - 32 + raw % 64;
    switch (op % 2) {
      case 0:
        ours[key] += raw;
        theirs[key] += raw;
        break;
      default:
        RC_ASSERT((ours.find(key) == ours.end()) == (theirs.find(key) == theirs.end()));
    }
    RC_ASSERT(ours.size() == theirs.size());
    RC_ASSERT(contents(ours) == contents(theirs));
  }
}

}  // namespace
}  // namespace kvsim::properties::page_books_containers_test
