#include "properties/status_books_checker.h"

#include <string>
#include <variant>

namespace kvsim::properties {
namespace {

std::string status_text(const std::optional<core::kv_status>& status) {
  return status ? core::to_string(*status) : "no status";
}

}  // namespace

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
  const auto* decided = std::get_if<sim::core_decided>(&e.body);
  if (decided == nullptr) return std::nullopt;
  const core::rank_id rank = decided->what.rank;
  follow_room(decided->what, index);
  if (const auto* change = std::get_if<core::status_changed>(&decided->what.body)) {
    replayed& books = statuses_[{rank, change->key}];
    if (change->from != books.status) {
      sim::finding found{"I4",
                         "I4: rank " + std::to_string(rank) + " changed the status of " +
                             core::to_string(change->key) + " from " + status_text(change->from) +
                             " at step " + std::to_string(e.step) + ", but its events had left " +
                             status_text(books.status),
                         {},
                         {}};
      if (books.since) found.evidence.push_back(*books.since);
      found.evidence.push_back(index);
      return found;
    }
    books = {change->to, index};
  } else if (const auto* forgotten = std::get_if<core::status_forgotten>(&decided->what.body)) {
    statuses_[{rank, forgotten->key}] = {std::nullopt, index};
  }
  return std::nullopt;
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
