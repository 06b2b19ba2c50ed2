#include "properties/status_books_checker.h"

#include <string>
#include <variant>

namespace kvsim::properties {
namespace {

std::string status_text(const std::optional<core::kv_status>& status) {
  return status ? core::to_string(*status) : "no status";
}

}  // namespace

sim::event_kinds status_books_checker::subscriptions() const {
  return sim::event_kinds::of<sim::status_read, sim::status_written, core::room_opened,
                              core::chunk_admitted, core::room_closed, core::room_cleared,
                              core::status_changed, core::status_update_ignored,
                              core::status_forgotten>();
}

std::optional<sim::finding> status_books_checker::observe(const sim::sim_event& e,
                                                          std::size_t index) {
  if (const auto* read = std::get_if<sim::status_read>(&e.body)) {
    const replayed& books = statuses_[{read->rank, read->key}];
    if (read->status == books.status) return check_progress(*read, e.step, index);
    sim::finding found{"I4",
                       "I4: rank " + std::to_string(read->rank) + "'s status table answered " +
                           status_text(read->status) + " for " + core::to_string(read->key) +
                           " at step " + std::to_string(e.step) + ", but its events gave it " +
                           status_text(books.status),
                       {},
                       {}};
    if (books.since) found.evidence.push_back(*books.since);
    found.evidence.push_back(index);
    return found;
  }
  if (const auto* write = std::get_if<sim::status_written>(&e.body)) {
    return check_written(*write, e.step, index);
  }
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  follow_room(decided->what, index);
  if (const auto* change = std::get_if<core::status_changed>(&decided->what.body)) {
    last_[rank] = {index, change->key, change->to, true};
    return check_change(rank, *change, e.step, index);
  }
  if (const auto* ignored = std::get_if<core::status_update_ignored>(&decided->what.body)) {
    last_[rank] = {index, ignored->key, ignored->attempted, false};
    return check_ignored(rank, *ignored, e.step, index);
  }
  if (const auto* forgotten = std::get_if<core::status_forgotten>(&decided->what.body)) {
    statuses_[{rank, forgotten->key}] = {std::nullopt, index};
  }
  return std::nullopt;
}

std::optional<sim::finding> status_books_checker::check_change(core::rank_id rank,
                                                               const core::status_changed& change,
                                                               std::uint64_t step,
                                                               std::size_t index) {
  replayed& books = statuses_[{rank, change.key}];
  const std::string at = " at step " + std::to_string(step);
  std::string wrong;
  if (change.from != books.status) {
    wrong = "from " + status_text(change.from) + at + ", but its events had left " +
            status_text(books.status);
  } else if (change.from == change.to) {
    wrong = "from " + status_text(change.from) + " to itself" + at + ", a change that changes nothing";
  } else if (change.from && core::is_terminal(*change.from)) {
    wrong = "from " + status_text(change.from) + ", a final status, to " +
            core::to_string(change.to) + at;
  } else if (change.from && change.to != core::kv_status::failed && change.to < *change.from) {
    wrong = "back from " + status_text(change.from) + " to " + core::to_string(change.to) + at;
  }
  if (wrong.empty()) {
    books = {change.to, index};
    return std::nullopt;
  }
  sim::finding found{"I4",
                     "I4: rank " + std::to_string(rank) + " changed the status of " +
                         core::to_string(change.key) + " " + wrong,
                     {},
                     {}};
  if (books.since) found.evidence.push_back(*books.since);
  found.evidence.push_back(index);
  return found;
}

std::optional<sim::finding> status_books_checker::check_ignored(
    core::rank_id rank, const core::status_update_ignored& ignored, std::uint64_t step,
    std::size_t index) {
  const replayed& books = statuses_[{rank, ignored.key}];
  // The one reason the table's rules give for ignoring `attempted` over the books' status;
  // empty when the rules apply the update.
  std::optional<core::status_ignore_reason> reason;
  if (!books.status) {
    if (ignored.attempted == core::kv_status::failed) {
      reason = core::status_ignore_reason::failed_for_absent_room;
    }
  } else if (core::is_terminal(*books.status)) {
    reason = core::status_ignore_reason::terminal;
  } else if (ignored.attempted == *books.status) {
    reason = core::status_ignore_reason::unchanged;
  } else if (ignored.attempted != core::kv_status::failed && ignored.attempted < *books.status) {
    reason = core::status_ignore_reason::regression;
  }
  std::string wrong;
  if (ignored.current != books.status) {
    wrong = "while its status was " + status_text(ignored.current) + ", but its events gave it " +
            status_text(books.status);
  } else if (!reason) {
    wrong = "over " + status_text(books.status) + ", an update the table's rules apply";
  } else if (ignored.reason != *reason) {
    wrong = std::string("as ") + core::to_string(ignored.reason) + " over " +
            status_text(books.status) + ", where the rules say " + core::to_string(*reason);
  }
  if (wrong.empty()) return std::nullopt;
  sim::finding found{"I4",
                     "I4: rank " + std::to_string(rank) + " ignored " +
                         core::to_string(ignored.attempted) + " for " +
                         core::to_string(ignored.key) + " " + wrong + " at step " +
                         std::to_string(step),
                     {},
                     {}};
  if (books.since) found.evidence.push_back(*books.since);
  found.evidence.push_back(index);
  return found;
}

std::optional<sim::finding> status_books_checker::check_written(const sim::status_written& write,
                                                                std::uint64_t step,
                                                                std::size_t index) {
  const auto last = last_.find(write.rank);
  const bool reported = last != last_.end() && last->second.key == write.key &&
                        last->second.status == write.status &&
                        last->second.applied == write.applied;
  std::vector<std::size_t> evidence;
  if (last != last_.end()) {
    evidence.push_back(last->second.index);
    last_.erase(last);
  }
  if (reported) return std::nullopt;
  evidence.push_back(index);
  return sim::finding{"I4",
                      "I4: rank " + std::to_string(write.rank) + "'s status table " +
                          (write.applied ? "applied" : "ignored") + " a late " +
                          core::to_string(write.status) + " for " + core::to_string(write.key) +
                          " at step " + std::to_string(step) + " but its last decision " +
                          "reported no such " + (write.applied ? "change" : "refusal"),
                      std::move(evidence),
                      {}};
}

void status_books_checker::follow_room(const core::event& e, std::size_t index) {
  if (const auto* opened = std::get_if<core::room_opened>(&e.body)) {
    rooms_.insert_or_assign({e.rank, opened->key}, room_life{index, std::nullopt, std::nullopt});
  } else if (const auto* admitted = std::get_if<core::chunk_admitted>(&e.body)) {
    const auto room = rooms_.find({e.rank, admitted->key});
    if (room != rooms_.end() && !room->second.admitted) room->second.admitted = index;
  } else if (const auto* closed = std::get_if<core::room_closed>(&e.body)) {
    // A tombstone left before the open is no close of the room that opens later (B10's late
    // sender opens a tombstoned room: the closed-room rule sees that, not the books).
    const auto room = rooms_.find({e.rank, closed->key});
    if (room != rooms_.end() && !room->second.closed) room->second.closed = index;
  } else if (const auto* cleared = std::get_if<core::room_cleared>(&e.body)) {
    rooms_.erase({e.rank, cleared->key});
  }
}

std::optional<sim::finding> status_books_checker::check_progress(const sim::status_read& read,
                                                                 std::uint64_t step,
                                                                 std::size_t index) const {
  const auto room = rooms_.find({read.rank, read.key});
  if (room == rooms_.end()) return std::nullopt;
  const room_life& life = room->second;
  core::kv_status expected = core::kv_status::bootstrapping;
  std::size_t because = life.opened;
  const char* why = "opened";
  if (life.closed) {
    expected = core::kv_status::failed;
    because = *life.closed;
    why = "closed";
  } else if (life.admitted) {
    expected = core::kv_status::transferring;
    because = *life.admitted;
    why = "admitted a chunk";
  }
  // Failed is always a status the room may have: a transfer can fail on its own without a
  // close (the outcome checker asks whether that failure had a cause).
  if (read.status == expected || read.status == core::kv_status::failed) return std::nullopt;
  return sim::finding{"I4",
                      "I4: rank " + std::to_string(read.rank) + "'s status table answered " +
                          status_text(read.status) + " for " + core::to_string(read.key) +
                          " at step " + std::to_string(step) + ", but the room had " + why +
                          " (" + core::to_string(expected) + " expected)",
                      {because, index},
                      {}};
}

}  // namespace kvsim::properties
