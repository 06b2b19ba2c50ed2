// core::page_set (an owner's pages in the ledger) must answer exactly as the std::set it
// replaced: the ledger's release_all, pages_of and consistency check iterate it, and any
// difference in membership or order would change what the ledger releases and reports.
#include "core/page_set.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "core/page_ledger.h"
#include "tests/support/recording_sink.h"

namespace kvsim::core::page_set_test {
namespace {

RC_GTEST_PROP(PageSet, HoldsWhatAStdSetHoldsUnderAnySequenceOfAddsAndRemoves, ()) {
  page_set pages;
  std::set<page_index> model;
  const auto calls = *rc::gen::container<std::vector<std::uint8_t>>(rc::gen::inRange<std::uint8_t>(0, 24));
  for (const page_index page : calls) {
    // As the ledger calls it: a page it does not hold joins, one it holds leaves.
    if (model.contains(page)) {
      pages.remove(page);
      model.erase(page);
    } else {
      pages.add(page);
      model.insert(page);
    }
    RC_ASSERT(pages.size() == model.size());
    RC_ASSERT(pages.empty() == model.empty());
    RC_ASSERT(std::vector<page_index>(pages.begin(), pages.end()) ==
              std::vector<page_index>(model.begin(), model.end()));
  }
}

// A page added twice, or removed without being held, is a broken ledger: the invariant stops
// the process rather than let the owner's index and the pages disagree.
TEST(PageSetDeathTest, AddingAHeldPageOrRemovingAnAbsentOneStops) {
  EXPECT_DEATH(
      {
        page_set pages;
        pages.add(3);
        pages.add(3);
      },
      "a page joins its owner's pages once");
  EXPECT_DEATH(
      {
        page_set pages;
        pages.add(3);
        pages.remove(4);
      },
      "a page leaves only the owner that holds it");
}

// A page list longer than the ledger's short-list check goes through its set: a repeat is
// still refused, naming the first repeated page in the list's order.
TEST(PageSet, ALongPageListWithARepeatIsRefusedLikeAShortOne) {
  kvsim::testing::recording_sink sink;
  page_ledger ledger(0, 64, sink);
  const room_key owner{7, 0};
  const auto held = ledger.allocate(owner, 40).value();
  for (const std::size_t length : {std::size_t{3}, std::size_t{40}}) {
    std::vector<page_index> list(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(length));
    list.back() = list.front();  // the last page repeats the first
    const auto leased = ledger.lease(owner, lease_role::source, list);
    ASSERT_FALSE(leased.ok()) << length << " pages: a list with a repeat was leased";
    EXPECT_EQ(leased.error(), ledger_error::duplicate_page) << length << " pages";
    const auto* refused = std::get_if<ledger_misuse>(&sink.events().back().body);
    ASSERT_NE(refused, nullptr);
    ASSERT_TRUE(refused->page.has_value());
    EXPECT_EQ(*refused->page, list.front()) << length << " pages";
  }
}

}  // namespace
}  // namespace kvsim::core::page_set_test
