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

namespace kvsim::core {
namespace {

RC_GTEST_PROP(PageSet, AnswersAsAStdSetUnderAnySequenceOfCalls, ()) {
  page_set pages;
  std::set<page_index> model;
  const auto calls = *rc::gen::container<std::vector<std::pair<std::uint8_t, std::uint8_t>>>(
      rc::gen::pair(rc::gen::inRange<std::uint8_t>(0, 3), rc::gen::inRange<std::uint8_t>(0, 24)));
  for (const auto& [call, page] : calls) {
    switch (call) {
      case 0:
        RC_ASSERT(pages.insert(page) == model.insert(page).second);
        break;
      case 1:
        RC_ASSERT(pages.erase(page) == model.erase(page));
        break;
      default:
        RC_ASSERT(pages.contains(page) == model.contains(page));
        break;
    }
    RC_ASSERT(pages.size() == model.size());
    RC_ASSERT(pages.empty() == model.empty());
    RC_ASSERT(std::vector<page_index>(pages.begin(), pages.end()) ==
              std::vector<page_index>(model.begin(), model.end()));
  }
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
}  // namespace kvsim::core
