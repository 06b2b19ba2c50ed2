#include "core/transfer_status_table.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <optional>
#include <ostream>
#include <variant>
#include <vector>

#include "tests/support/recording_sink.h"

namespace kvsim::core::transfer_status_table_test {
namespace {

using testing::recording_sink;

const room_key request_a{7, 0};
const room_key request_a_next{7, 1};  // the same room id, reused by the next request
const room_key request_b{8, 0};

const std::vector<kv_status> all_statuses{kv_status::failed, kv_status::bootstrapping,
                                          kv_status::waiting_for_input, kv_status::transferring,
                                          kv_status::success};
const std::vector<kv_status> non_terminal{kv_status::bootstrapping, kv_status::waiting_for_input,
                                          kv_status::transferring};

// The last event was an applied change of `key` from `from` to `to`.
void expect_changed(const recording_sink& sink, room_key key, std::optional<kv_status> from,
                    kv_status to) {
  const auto changed = sink.last<status_changed>();
  ASSERT_TRUE(changed.has_value());
  ASSERT_TRUE(std::holds_alternative<status_changed>(sink.events().back().body))
      << describe(sink.events().back());
  EXPECT_EQ(changed->key, key);
  EXPECT_EQ(changed->from, from);
  EXPECT_EQ(changed->to, to);
}

// The last event was an ignored update of `key`, and nothing changed.
void expect_ignored(const recording_sink& sink, room_key key, std::optional<kv_status> current,
                    kv_status attempted, status_ignore_reason reason) {
  ASSERT_TRUE(std::holds_alternative<status_update_ignored>(sink.events().back().body))
      << describe(sink.events().back());
  const auto ignored = std::get<status_update_ignored>(sink.events().back().body);
  EXPECT_EQ(ignored.key, key);
  EXPECT_EQ(ignored.current, current);
  EXPECT_EQ(ignored.attempted, attempted);
  EXPECT_EQ(ignored.reason, reason) << to_string(ignored.reason);
}

TEST(TransferStatusTable, ProgressMovesUpThroughEveryStatus) {
  recording_sink sink;
  transfer_status_table table(3, sink);
  EXPECT_EQ(table.get(request_a), std::nullopt);
  std::optional<kv_status> previous;
  for (kv_status s : {kv_status::bootstrapping, kv_status::waiting_for_input,
                      kv_status::transferring, kv_status::success}) {
    EXPECT_EQ(table.update(request_a, s), status_update::applied) << to_string(s);
    EXPECT_EQ(table.get(request_a), s);
    expect_changed(sink, request_a, previous, s);
    EXPECT_EQ(sink.events().back().rank, 3u);
    previous = s;
  }
  EXPECT_EQ(sink.size(), 4u);
  EXPECT_EQ(table.size(), 1u);
}

TEST(TransferStatusTable, ProgressMaySkipStatuses) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  expect_changed(sink, request_a, std::nullopt, kv_status::transferring);
  ASSERT_EQ(table.update(request_a, kv_status::success), status_update::applied);
  expect_changed(sink, request_a, kv_status::transferring, kv_status::success);
}

TEST(TransferStatusTable, FailedInterruptsAnyNonTerminalStatus) {
  for (kv_status current : non_terminal) {
    recording_sink sink;
    transfer_status_table table(0, sink);
    ASSERT_EQ(table.update(request_a, current), status_update::applied);
    EXPECT_EQ(table.update(request_a, kv_status::failed), status_update::applied)
        << to_string(current);
    EXPECT_EQ(table.get(request_a), kv_status::failed);
    expect_changed(sink, request_a, current, kv_status::failed);
  }
}

TEST(TransferStatusTable, FailedIsStickyAndLaterUpdatesAreIgnoredAsTerminal) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  ASSERT_EQ(table.update(request_a, kv_status::failed), status_update::applied);
  for (kv_status late : all_statuses) {
    sink.clear();
    EXPECT_EQ(table.update(request_a, late), status_update::ignored) << to_string(late);
    EXPECT_EQ(table.get(request_a), kv_status::failed);
    ASSERT_EQ(sink.size(), 1u);
    expect_ignored(sink, request_a, kv_status::failed, late, status_ignore_reason::terminal);
  }
}

TEST(TransferStatusTable, SuccessIsFinal) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::success), status_update::applied);
  for (kv_status late : all_statuses) {
    sink.clear();
    EXPECT_EQ(table.update(request_a, late), status_update::ignored) << to_string(late);
    EXPECT_EQ(table.get(request_a), kv_status::success);
    ASSERT_EQ(sink.size(), 1u);
    expect_ignored(sink, request_a, kv_status::success, late, status_ignore_reason::terminal);
  }
}

TEST(TransferStatusTable, RegressionIsIgnored) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  sink.clear();
  EXPECT_EQ(table.update(request_a, kv_status::bootstrapping), status_update::ignored);
  EXPECT_EQ(table.get(request_a), kv_status::transferring);
  ASSERT_EQ(sink.size(), 1u);
  expect_ignored(sink, request_a, kv_status::transferring, kv_status::bootstrapping,
                 status_ignore_reason::regression);
  EXPECT_EQ(table.update(request_a, kv_status::waiting_for_input), status_update::ignored);
  expect_ignored(sink, request_a, kv_status::transferring, kv_status::waiting_for_input,
                 status_ignore_reason::regression);
  EXPECT_EQ(sink.count<status_changed>(), 0u);
}

TEST(TransferStatusTable, TheSameStatusAgainIsIgnoredAsUnchanged) {
  for (kv_status current : non_terminal) {
    recording_sink sink;
    transfer_status_table table(0, sink);
    ASSERT_EQ(table.update(request_a, current), status_update::applied);
    sink.clear();
    EXPECT_EQ(table.update(request_a, current), status_update::ignored) << to_string(current);
    EXPECT_EQ(table.get(request_a), current);
    ASSERT_EQ(sink.size(), 1u);
    expect_ignored(sink, request_a, current, current, status_ignore_reason::unchanged);
  }
}

TEST(TransferStatusTable, FailedForAnAbsentRoomIsIgnoredAndDoesNotCreateIt) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  EXPECT_EQ(table.update(request_a, kv_status::failed), status_update::ignored);
  EXPECT_EQ(table.get(request_a), std::nullopt);
  EXPECT_EQ(table.size(), 0u);
  ASSERT_EQ(sink.size(), 1u);
  expect_ignored(sink, request_a, std::nullopt, kv_status::failed,
                 status_ignore_reason::failed_for_absent_room);
  // The next request on the room starts clean.
  EXPECT_EQ(table.update(request_a, kv_status::bootstrapping), status_update::applied);
  expect_changed(sink, request_a, std::nullopt, kv_status::bootstrapping);
}

TEST(TransferStatusTable, ALateFailedAfterEraseDoesNotResurrectTheRoom) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  ASSERT_EQ(table.update(request_a, kv_status::success), status_update::applied);
  table.erase(request_a);
  EXPECT_EQ(table.get(request_a), std::nullopt);
  EXPECT_EQ(table.size(), 0u);
  sink.clear();
  EXPECT_EQ(table.update(request_a, kv_status::failed), status_update::ignored);
  EXPECT_EQ(table.get(request_a), std::nullopt);
  EXPECT_EQ(table.size(), 0u);
  expect_ignored(sink, request_a, std::nullopt, kv_status::failed,
                 status_ignore_reason::failed_for_absent_room);
}

TEST(TransferStatusTable, ErasedRoomStartsAgainFromAnyStatus) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  ASSERT_EQ(table.update(request_a, kv_status::failed), status_update::applied);
  table.erase(request_a);
  EXPECT_EQ(table.update(request_a, kv_status::bootstrapping), status_update::applied);
  expect_changed(sink, request_a, std::nullopt, kv_status::bootstrapping);
}

TEST(TransferStatusTable, GenerationsAndRoomsAreIndependent) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  ASSERT_EQ(table.update(request_a, kv_status::transferring), status_update::applied);
  ASSERT_EQ(table.update(request_a, kv_status::failed), status_update::applied);
  EXPECT_EQ(table.update(request_a_next, kv_status::bootstrapping), status_update::applied);
  EXPECT_EQ(table.update(request_b, kv_status::waiting_for_input), status_update::applied);
  EXPECT_EQ(table.get(request_a), kv_status::failed);
  EXPECT_EQ(table.get(request_a_next), kv_status::bootstrapping);
  EXPECT_EQ(table.get(request_b), kv_status::waiting_for_input);
  EXPECT_EQ(table.size(), 3u);
  // A Failed for the old incarnation is sticky there and does not touch the new one.
  EXPECT_EQ(table.update(request_a_next, kv_status::failed), status_update::applied);
  table.erase(request_a);
  EXPECT_EQ(table.get(request_a_next), kv_status::failed);
  EXPECT_EQ(table.size(), 2u);
}

TEST(TransferStatusTable, EveryUpdateEmitsExactlyOneEvent) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  std::size_t updates = 0;
  std::size_t forgotten = 0;
  for (kv_status a : all_statuses) {
    for (kv_status b : all_statuses) {
      if (table.get(request_a)) ++forgotten;
      table.erase(request_a);
      (void)table.update(request_a, a);
      (void)table.update(request_a, b);
      updates += 2;
    }
  }
  EXPECT_EQ(sink.size(), updates + forgotten);
  EXPECT_EQ(sink.count<status_changed>() + sink.count<status_update_ignored>(), updates);
  // Forgetting says so once per status forgotten, never for a room that had none.
  EXPECT_EQ(sink.count<status_forgotten>(), forgotten);
  EXPECT_GT(forgotten, 0u);
}

// --- property: a random sequence of updates -----------------------------------------------

struct update_step {
  room_key key;
  kv_status status = kv_status::failed;
  bool erase_first = false;  // the room was finished and forgotten just before
};

// How RapidCheck prints a step of a counterexample.
void showValue(const update_step& s, std::ostream& os) {
  os << (s.erase_first ? "erase, then " : "") << "update(" << to_string(s.key) << ", "
     << to_string(s.status) << ")";
}

// The reference: DOMAIN.md's rules as a fold over one room's updates.
std::optional<kv_status> reference_fold(std::optional<kv_status> current, kv_status next) {
  if (!current) return next == kv_status::failed ? std::nullopt : std::optional(next);
  if (*current == kv_status::failed || *current == kv_status::success) return current;
  if (next == kv_status::failed || next > *current) return next;
  return current;
}

rc::Gen<update_step> any_update(bool with_erase) {
  const std::vector<room_key> keys{request_a, request_a_next, request_b};
  return rc::gen::build<update_step>(
      rc::gen::set(&update_step::key, rc::gen::elementOf(keys)),
      rc::gen::set(&update_step::status, rc::gen::elementOf(all_statuses)),
      rc::gen::set(&update_step::erase_first,
                   with_erase ? rc::gen::weightedElement<bool>({{1, true}, {9, false}})
                              : rc::gen::just(false)));
}

void check_sequence(const std::vector<update_step>& steps) {
  recording_sink sink;
  transfer_status_table table(0, sink);
  std::map<room_key, std::optional<kv_status>> reference;
  for (const update_step& s : steps) {
    if (s.erase_first) {
      table.erase(s.key);
      reference[s.key] = std::nullopt;
    }
    const std::optional<kv_status> before = table.get(s.key);
    RC_ASSERT(before == reference[s.key]);
    sink.clear();
    const status_update outcome = table.update(s.key, s.status);
    const std::optional<kv_status> after = table.get(s.key);

    // Failed is sticky.
    if (before == kv_status::failed) RC_ASSERT(after == kv_status::failed);
    // A Failed update never creates a room.
    if (!before && s.status == kv_status::failed) RC_ASSERT(!after.has_value());
    // Non-failed statuses never decrease; a room never disappears by an update.
    if (before) {
      RC_ASSERT(after.has_value());
      if (*after != kv_status::failed) RC_ASSERT(*after >= *before);
    }
    // Exactly one event, matching the outcome.
    RC_ASSERT(sink.size() == 1u);
    if (outcome == status_update::applied) {
      RC_ASSERT(after != before);
      const auto changed = sink.last<status_changed>();
      RC_ASSERT(changed.has_value());
      RC_ASSERT(changed->from == before);
      RC_ASSERT(std::optional(changed->to) == after);
    } else {
      RC_ASSERT(after == before);
      RC_ASSERT(sink.last<status_update_ignored>().has_value());
    }

    reference[s.key] = reference_fold(reference[s.key], s.status);
    RC_ASSERT(after == reference[s.key]);
  }
  for (const auto& [key, expected] : reference) RC_ASSERT(table.get(key) == expected);
  std::uint32_t present = 0;
  for (const auto& [key, expected] : reference) present += expected ? 1 : 0;
  RC_ASSERT(table.size() == present);
}

RC_GTEST_PROP(TransferStatusTableProperty, StatusFollowsTheReferenceFoldAndNeverLeavesFailed,
              ()) {
  check_sequence(*rc::gen::container<std::vector<update_step>>(any_update(false)));
}

RC_GTEST_PROP(TransferStatusTableProperty, ErasedRoomsAreNeverResurrectedByALateFailed, ()) {
  check_sequence(*rc::gen::container<std::vector<update_step>>(any_update(true)));
}

}  // namespace
}  // namespace kvsim::core::transfer_status_table_test
