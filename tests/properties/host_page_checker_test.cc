#include "properties/host_page_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/properties/event_builder.h"

namespace kvsim::properties {
namespace {

using core::host_page_owner;
using core::page_index;
using core::room_key;
using testing::event_builder;
using testing::observe_all;
using testing::run_to_quiescence;

const room_key request_a{7, 0};
const room_key request_c{9, 0};

std::size_t allocated(event_builder& log, core::rank_id rank, room_key key,
                      std::vector<page_index> pages) {
  return log.decided(rank, core::host_pages_allocated{key, std::move(pages)});
}
std::size_t freed(event_builder& log, core::rank_id rank, room_key key,
                  std::vector<page_index> pages, host_page_owner by) {
  return log.decided(rank, core::host_pages_freed{key, std::move(pages), by});
}

// --- fires ------------------------------------------------------------------------------

TEST(HostPageChecker, FiresWhenTheSchedulerAndTheIoThreadBothFreeAPage) {
  // The ownership split of a terminated prefetch broken: both sides free the tail.
  event_builder log;
  const auto alloc = log.at(3).decided(0, core::host_pages_allocated{request_a, {5, 6}});
  const auto first =
      log.at(8).decided(0, core::host_pages_freed{request_a, {5, 6}, host_page_owner::scheduler});
  const auto second = freed(log, 0, request_a, {6}, host_page_owner::io_thread);  // step 9

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: host page 6 of room 7/gen 0 on rank 0 was freed twice: by the scheduler at step 8 "
      "and by the io_thread at step 9 (allocated at step 3)",
      {alloc, first, second},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(HostPageChecker, NamesTheRequestThatNowOwnsADoublyFreedPage) {
  event_builder log;
  const auto alloc = allocated(log, 0, request_a, {5});                           // step 1
  const auto first = freed(log, 0, request_a, {5}, host_page_owner::io_thread);   // step 2
  const auto reused = allocated(log, 0, request_c, {5});                          // step 3
  const auto second = freed(log, 0, request_a, {5}, host_page_owner::scheduler);  // step 4

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: host page 5 of room 7/gen 0 on rank 0 was freed twice: by the io_thread at step 2 and "
      "by the scheduler at step 4 (allocated at step 1); the page now belongs to room 9/gen 0 "
      "(allocated at step 3)",
      {alloc, first, reused, second},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(HostPageChecker, FiresOnAFreeOfAPageNeverAllocatedToThatRequest) {
  event_builder log;
  const auto other = allocated(log, 1, request_c, {7});                             // step 1
  const auto wrong = freed(log, 1, request_a, {7, 8}, host_page_owner::io_thread);  // step 2

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: the io_thread freed host page 7 of room 7/gen 0 on rank 1 at step 2, but the page was "
      "never allocated to that request; the page now belongs to room 9/gen 0 (allocated at step "
      "1)",
      {other, wrong},
      {"I6: the io_thread freed host page 8 of room 7/gen 0 on rank 1 at step 2, but the page "
       "was never allocated to that request"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(HostPageChecker, FiresAtQuiescenceOnHostPagesNeverFreed) {
  event_builder log;
  const auto a = allocated(log, 0, request_a, {5, 6, 7});  // step 1
  const auto c = allocated(log, 1, request_c, {2});        // step 2
  freed(log, 0, request_a, {6}, host_page_owner::scheduler);
  const auto later = allocated(log, 0, request_a, {9});  // step 4

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: at quiescence host pages [5,7,9] of room 7/gen 0 on rank 0 (allocated at steps 1 and "
      "4) were never freed; host page 2 of room 9/gen 0 on rank 1 (allocated at step 2) was "
      "never freed",
      {a, c, later},
      {"rank 0 host page 5 of room 7/gen 0, allocated at step 1, never freed",
       "rank 0 host page 7 of room 7/gen 0, allocated at step 1, never freed",
       "rank 0 host page 9 of room 7/gen 0, allocated at step 4, never freed",
       "rank 1 host page 2 of room 9/gen 0, allocated at step 2, never freed"}};
  EXPECT_EQ(run_to_quiescence(checker, log.events()), expected);
}

// --- quiet ------------------------------------------------------------------------------

TEST(HostPageChecker, StaysQuietWhenTheSchedulerFreesTheHeadAndTheIoThreadTheTail) {
  event_builder log;
  allocated(log, 0, request_a, {1, 2, 3, 4});
  allocated(log, 1, request_a, {1, 2});  // the same request's prefetch on a peer rank
  freed(log, 0, request_a, {1, 2}, host_page_owner::scheduler);
  freed(log, 1, request_a, {1, 2}, host_page_owner::scheduler);
  freed(log, 0, request_a, {3, 4}, host_page_owner::io_thread);

  host_page_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(HostPageChecker, StaysQuietWhenAFreedPageIsAllocatedAndFreedAgain) {
  event_builder log;
  allocated(log, 0, request_a, {5});
  freed(log, 0, request_a, {5}, host_page_owner::scheduler);
  allocated(log, 0, request_c, {5});
  freed(log, 0, request_c, {5}, host_page_owner::io_thread);
  allocated(log, 0, request_a, {5});  // a new prefetch of the same request
  freed(log, 0, request_a, {5}, host_page_owner::io_thread);

  host_page_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(HostPageChecker, StaysQuietOnAnEmptyRun) {
  host_page_checker checker;
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties
