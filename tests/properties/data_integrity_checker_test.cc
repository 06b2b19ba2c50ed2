#include "properties/data_integrity_checker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/properties/event_builder.h"

namespace kvsim::properties::data_integrity_checker_test {
namespace {

using core::room_key;
using testing::event_builder;
using testing::observe_all;

const room_key request_a{7, 0};
const room_key request_b{7, 1};  // the same room, reused: a new request
const room_key request_c{9, 0};

constexpr sim::transfer_id transfer_1 = 4294967297;

// --- fires ------------------------------------------------------------------------------

TEST(DataIntegrityChecker, FiresWhenALateTransferLeftAnotherRequestsBytesInAReusedPage) {
  // DOMAIN.md B1: A's late write lands in page 2 of rank 1, which B now owns.
  event_builder log;
  log.add(sim::page_written{0, 5, request_a, 0});                   // step 1: prefill
  log.add(sim::page_written{1, 2, request_b, 0});                   // step 2: B's own
  const auto late = log.copied(transfer_1, request_a, 0, 5, 1, 2);  // step 3
  const auto read = log.add(sim::page_read{1, 2, request_b, 0, false, request_a});  // step 4

  data_integrity_checker checker;
  const sim::finding expected{
      "I7",
      "I7: room 7/gen 1 read page 2 on rank 1 at step 4 (its logical page 0) and found bytes "
      "written for room 7/gen 0 (copied there by transfer 4294967297 at step 3)",
      {late, read},
      {"page 2 on rank 1 last received logical page 0 of room 7/gen 0 at step 3 (transfer "
       "4294967297)"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(DataIntegrityChecker, FiresOnUnrecognisableBytes) {
  event_builder log;
  const auto read = log.at(7).add(sim::page_read{1, 3, request_a, 2, false, std::nullopt});

  data_integrity_checker checker;
  const sim::finding expected{
      "I7",
      "I7: room 7/gen 0 read page 3 on rank 1 at step 7 (its logical page 2) and found "
      "unrecognisable bytes",
      {read},
      {}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(DataIntegrityChecker, FiresOnAnotherRequestsBytesWrittenInPlace) {
  event_builder log;
  const auto written = log.add(sim::page_written{0, 3, request_c, 1});
  const auto read = log.add(sim::page_read{0, 3, request_a, 1, false, request_c});

  data_integrity_checker checker;
  const sim::finding expected{
      "I7",
      "I7: room 7/gen 0 read page 3 on rank 0 at step 2 (its logical page 1) and found bytes "
      "written for room 9/gen 0 (written there at step 1)",
      {written, read},
      {"page 3 on rank 0 last received logical page 1 of room 9/gen 0 at step 1"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(DataIntegrityChecker, FiresOnTheReadersOwnBytesOfAnotherLogicalPage) {
  event_builder log;
  const auto written = log.add(sim::page_written{1, 3, request_a, 1});
  const auto read = log.add(sim::page_read{1, 3, request_a, 0, false, request_a});

  data_integrity_checker checker;
  const sim::finding expected{
      "I7",
      "I7: room 7/gen 0 read page 3 on rank 1 at step 2 (its logical page 0) and found its own "
      "request's bytes, but not those of that logical page (written there at step 1)",
      {written, read},
      {"page 3 on rank 1 last received logical page 1 of room 7/gen 0 at step 1"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

TEST(DataIntegrityChecker, NamesOnlyTheProvenanceThatAgreesWithTheData) {
  // The bookkeeping says B's bytes landed last; the data says C's: the data wins.
  event_builder log;
  log.add(sim::page_written{1, 3, request_b, 0});
  const auto read = log.add(sim::page_read{1, 3, request_b, 0, false, request_c});

  data_integrity_checker checker;
  const sim::finding expected{
      "I7",
      "I7: room 7/gen 1 read page 3 on rank 1 at step 2 (its logical page 0) and found bytes "
      "written for room 9/gen 0",
      {read},
      {"page 3 on rank 1 last received logical page 0 of room 7/gen 1 at step 1"}};
  EXPECT_EQ(observe_all(checker, log.events()), expected);
}

// --- quiet ------------------------------------------------------------------------------

TEST(DataIntegrityChecker, StaysQuietOnIntactReads) {
  event_builder log;
  log.add(sim::page_written{0, 5, request_a, 0});
  log.copied(transfer_1, request_a, 0, 5, 1, 2);
  log.add(sim::page_read{1, 2, request_a, 0, true, request_a});
  log.add(sim::page_written{1, 2, request_c, 0});  // reused afterwards: fine
  log.add(sim::page_read{1, 2, request_c, 0, true, request_c});

  data_integrity_checker checker;
  const auto found = observe_all(checker, log.events());
  EXPECT_EQ(found, std::nullopt) << found->message;
  EXPECT_EQ(checker.at_quiescence(), std::nullopt);
}

TEST(DataIntegrityChecker, LeavesPageOwnershipToTheOtherCheckers) {
  // A copy into a freed page is I1's finding; the data checker judges reads only.
  event_builder log;
  log.allocated(1, request_a, {2});
  log.freed(1, request_a, 2);
  log.copied(transfer_1, request_a, 0, 5, 1, 2);

  data_integrity_checker checker;
  EXPECT_EQ(observe_all(checker, log.events()), std::nullopt);
}

}  // namespace
}  // namespace kvsim::properties::data_integrity_checker_test
