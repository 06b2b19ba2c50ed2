#include "properties/host_page_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::host_page_checker_test {
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

std::size_t written(event_builder& log, core::rank_id rank, room_key key, page_index page,
                    std::uint32_t logical) {
  return log.add(sim::storage_page_written{1, rank, key, page, logical});
}

TEST(HostPageChecker, FiresWhenAStorageReadWritesAHostPageItsRequestAlreadyFreed) {
  // H2: the scheduler freed the pages without draining; the read's next page lands anyway.
  event_builder log;
  allocated(log, 0, request_a, {5, 6});                                           // step 1
  written(log, 0, request_a, 5, 0);                                               // step 2
  const auto free = freed(log, 0, request_a, {5, 6}, host_page_owner::scheduler);  // step 3
  const auto late = written(log, 0, request_a, 6, 1);                             // step 4

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: the storage read of room 7/gen 0 wrote host page 6 on rank 0 at step 4 (its logical "
      "page 1), but the page is free (the scheduler freed it from room 7/gen 0 at step 3)",
      {free, late},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(HostPageChecker, FiresWhenAStorageReadWritesIntoAnotherRequestsHostPage) {
  // The freed page went to request C; A's late write lands in C's bytes.
  event_builder log;
  allocated(log, 1, request_a, {2});                                              // step 1
  const auto free = freed(log, 1, request_a, {2}, host_page_owner::scheduler);    // step 2
  const auto reused = allocated(log, 1, request_c, {2});                          // step 3
  const auto late = written(log, 1, request_a, 2, 0);                             // step 4

  host_page_checker checker;
  const sim::finding expected{
      "I6",
      "I6: the storage read of room 7/gen 0 wrote host page 2 on rank 1 at step 4 (its logical "
      "page 0), but the page belongs to room 9/gen 0 (allocated at step 3; the scheduler freed "
      "it from room 7/gen 0 at step 2): the write lands in that request's bytes",
      {free, reused, late},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(HostPageChecker, FiresWhenAStorageReadWritesAHostPageNeverAllocated) {
  event_builder log;
  const auto stray = written(log, 0, request_a, 3, 0);
  host_page_checker checker;
  const auto found = observe_all(checker, log.events());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->message,
            "I6: the storage read of room 7/gen 0 wrote host page 3 on rank 0 at step 1 (its "
            "logical page 0), but the page was never allocated");
  EXPECT_EQ(found->evidence, std::vector<std::size_t>{stray});
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

TEST(HostPageChecker, StaysQuietWhenEveryWriteLandsWhileItsRequestHoldsThePage) {
  event_builder log;
  allocated(log, 0, request_a, {5, 6});
  written(log, 0, request_a, 5, 0);
  written(log, 0, request_a, 6, 1);
  freed(log, 0, request_a, {5, 6}, host_page_owner::scheduler);
  allocated(log, 0, request_c, {6});
  written(log, 0, request_c, 6, 0);  // the page's next holder writes its own bytes

  host_page_checker checker;
  const auto found = run_to_quiescence(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
}

TEST(HostPageChecker, LeavesPagesNeverFreedToTheLeakChecker) {
  event_builder log;
  allocated(log, 0, request_a, {5});
  host_page_checker checker;
  EXPECT_EQ(run_to_quiescence(checker, log.events()), std::nullopt);
}

TEST(HostPageChecker, StaysQuietOnAnEmptyRun) {
  host_page_checker checker;
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::host_page_checker_test
