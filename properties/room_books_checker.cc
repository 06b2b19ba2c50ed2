#include "properties/room_books_checker.h"

#include <utility>
#include <variant>

#include "properties/finding_text.h"

namespace kvsim::properties {
namespace {

bool is_table_decision(const core::event_body& body) {
  return std::holds_alternative<core::room_opened>(body) ||
         std::holds_alternative<core::chunk_admitted>(body) ||
         std::holds_alternative<core::chunk_released>(body) ||
         std::holds_alternative<core::room_closed>(body) ||
         std::holds_alternative<core::room_cleared>(body) ||
         std::holds_alternative<core::tombstone_evicted>(body) ||
         std::holds_alternative<core::tombstone_retired>(body) ||
         std::holds_alternative<core::lifetime_refused>(body);
}

std::string table_of(core::rank_id rank) {
  return "rank " + std::to_string(rank) + "'s room table";
}

}  // namespace

// Every decision: one between a table's insert and the eviction it owes is a finding.
sim::event_kinds room_books_checker::subscriptions() const {
  return sim::event_kinds::of<sim::lifetimes_created, sim::lifetime_misuse_attempted,
                              sim::lifetime_misuse_answered, sim::core_decided,
                              sim::room_table_read>();
}

std::optional<sim::finding> room_books_checker::observe(const sim::sim_event& e,
                                                        std::size_t index) {
  if (const auto* created = std::get_if<sim::lifetimes_created>(&e.body)) {
    tables_[created->rank].tombstones_max = created->tombstones_max;
    return std::nullopt;
  }
  if (const auto* call = std::get_if<sim::lifetime_misuse_attempted>(&e.body)) {
    table_model& t = tables_[call->rank];
    t.careless = *call;
    t.careless_expected = predict(t, *call);
    t.careless_evidence = {index};
    t.careless_refusals.clear();
    t.careless_other.clear();
    return std::nullopt;
  }
  if (const auto* answer = std::get_if<sim::lifetime_misuse_answered>(&e.body)) {
    return answered(*answer, e.step, index);
  }
  if (const auto* made = std::get_if<sim::core_decided>(&e.body)) {
    return decided(made->what, e.step, index);
  }
  if (const auto* read = std::get_if<sim::room_table_read>(&e.body)) {
    return check_read(*read, e.step, index);
  }
  return std::nullopt;
}

std::optional<sim::finding> room_books_checker::check_read(const sim::room_table_read& read,
                                                           std::uint64_t step,
                                                           std::size_t index) const {
  const auto table = tables_.find(read.rank);
  static const table_model empty;
  const table_model& t = table == tables_.end() ? empty : table->second;
  for (const auto& answer : read.rooms) {
    const auto room = t.rooms.find(answer.key);
    const bool tracked = room != t.rooms.end();
    const bool tombstoned = t.tombstoned(answer.key);
    const sim::room_table_read::room_answer books{
        answer.key,
        tracked,
        tracked && !room->second.closed,
        tracked ? room->second.closed : tombstoned,
        tombstoned,
        tracked ? room->second.pending_leases : 0};
    if (answer == books) continue;
    const auto text = [](const sim::room_table_read::room_answer& a) {
      return std::string(a.tracked ? "tracked" : "not tracked") +
             (a.admitting ? ", admitting" : ", not admitting") + (a.closed ? ", closed" : ", not closed") +
             (a.tombstoned ? ", tombstoned" : "") + ", " + std::to_string(a.pending_leases) +
             " lease(s) pending";
    };
    return sim::finding{"I4",
                        "I4: " + table_of(read.rank) + " answered " + text(answer) + " for " +
                            core::to_string(answer.key) + " at step " + std::to_string(step) +
                            ", but its events make it " + text(books),
                        {index},
                        {}};
  }
  return std::nullopt;
}

std::optional<sim::finding> room_books_checker::decided(const core::event& what,
                                                        std::uint64_t step, std::size_t index) {
  const auto table = tables_.find(what.rank);
  if (!is_table_decision(what.body)) {
    // The table emits an eviction next to the insert that caused it: follow() finds any other
    // decision in between (an owed eviction that never came, or one that came with no insert).
    if (table == tables_.end()) return std::nullopt;
    return follow(table->second, what, step, index);
  }
  table_model& t = tables_[what.rank];
  if (t.careless) {
    t.careless_evidence.push_back(index);
    if (const auto* refused = std::get_if<core::lifetime_refused>(&what.body)) {
      t.careless_refusals.push_back(*refused);
      // A refused open of a before-open tombstone is the one refusal that moves a tombstone
      // (to the finished table); the eviction that may make room for it is owed, not a change.
      if (refused->error == core::lifetime_error::tombstoned &&
          t.before_open.keys.contains(refused->key)) {
        consume(t, refused->key);
      }
    } else if (t.owed_eviction && std::holds_alternative<core::tombstone_evicted>(what.body)) {
      if (const auto why = owed_decision(t, what)) t.careless_other.push_back(*why);
    } else {
      t.careless_other.push_back(core::describe(what));
    }
    return std::nullopt;
  }
  return follow(t, what, step, index);
}

std::optional<room_books_checker::disagreement> room_books_checker::opened_room(
    table_model& t, const core::room_opened& opened, std::size_t index) {
  if (t.tombstoned(opened.key)) {
    return disagreement{"opened " + core::to_string(opened.key) + " over its tombstone", {}};
  }
  const auto room = t.rooms.find(opened.key);
  if (room != t.rooms.end()) {
    return disagreement{"opened " + core::to_string(opened.key) + " a second time", {room->second.since}};
  }
  t.rooms.emplace(opened.key, room_model{false, 0, index});
  // Older generations of the room can no longer open here: their before-open tombstones are
  // retired next, in key order.
  for (const core::room_key& old : t.before_open.keys) {
    if (old.room == opened.key.room && old.generation < opened.key.generation) {
      t.owed_retirements.emplace_back(old, opened.key.generation);
    }
  }
  for (const auto& [old, generation] : t.owed_retirements) {
    t.before_open.keys.erase(old);
    std::erase(t.before_open.order, old);
  }
  return std::nullopt;
}

std::optional<room_books_checker::disagreement> room_books_checker::admitted_chunk(
    table_model& t, const core::chunk_admitted& admitted, std::size_t index) {
  const auto room = t.rooms.find(admitted.key);
  if (room == t.rooms.end()) {
    return disagreement{"admitted a chunk to " + core::to_string(admitted.key) + ", a room it never opened", {}};
  }
  room_model& r = room->second;
  if (r.closed) return disagreement{"admitted a chunk to closed " + core::to_string(admitted.key), {r.since}};
  if (admitted.pending_leases != r.pending_leases + 1) {
    return disagreement{"reported " + std::to_string(admitted.pending_leases) + " lease(s) pending on " +
                            core::to_string(admitted.key) + " after an admission, its events make " +
                            std::to_string(r.pending_leases + 1),
                        {r.since}};
  }
  r = {false, admitted.pending_leases, index};
  return std::nullopt;
}

std::optional<room_books_checker::disagreement> room_books_checker::released_chunk(
    table_model& t, const core::chunk_released& released, std::size_t index) {
  const auto room = t.rooms.find(released.key);
  if (room == t.rooms.end()) {
    return disagreement{"released a chunk lease of " + core::to_string(released.key) + ", a room it does not track", {}};
  }
  room_model& r = room->second;
  if (r.pending_leases == 0 || released.pending_leases != r.pending_leases - 1) {
    return disagreement{"reported " + std::to_string(released.pending_leases) + " lease(s) pending on " +
                            core::to_string(released.key) + " after a release, with " +
                            std::to_string(r.pending_leases) + " pending before it",
                        {r.since}};
  }
  r.pending_leases = released.pending_leases;
  r.since = index;
  return std::nullopt;
}

std::optional<room_books_checker::disagreement> room_books_checker::closed_room(
    table_model& t, const core::room_closed& closed, std::size_t index) {
  const auto room = t.rooms.find(closed.key);
  if (room != t.rooms.end()) {
    room_model& r = room->second;
    if (closed.tombstone || closed.pending_leases != r.pending_leases) {
      return disagreement{"reported the close of open " + core::to_string(closed.key) + " as " +
                              (closed.tombstone ? "a close before its open" : "an open room's") + " with " +
                              std::to_string(closed.pending_leases) +
                              " lease(s) pending; its events make an open room's with " +
                              std::to_string(r.pending_leases),
                          {r.since}};
    }
    r.closed = true;
    r.since = index;
    return std::nullopt;
  }
  if (!closed.tombstone || closed.pending_leases != 0) {
    return disagreement{"reported the close of " + core::to_string(closed.key) + ", which it never opened, as " +
                            (closed.tombstone ? "a close before open" : "an open room's") + " with " +
                            std::to_string(closed.pending_leases) + " lease(s) pending",
                        {}};
  }
  if (!t.tombstoned(closed.key)) add_tombstone(t, closed.table, closed.key);
  return std::nullopt;
}

std::optional<room_books_checker::disagreement> room_books_checker::cleared_room(
    table_model& t, const core::room_cleared& cleared) {
  const auto room = t.rooms.find(cleared.key);
  if (room == t.rooms.end()) {
    return disagreement{"cleared " + core::to_string(cleared.key) + ", a room it does not track", {}};
  }
  if (room->second.pending_leases != 0) {
    return disagreement{"cleared " + core::to_string(cleared.key) + " with " +
                            std::to_string(room->second.pending_leases) + " chunk lease(s) pending",
                        {room->second.since}};
  }
  const bool was_closed = room->second.closed;
  t.rooms.erase(room);
  if (was_closed) add_tombstone(t, core::tombstone_table::finished, cleared.key);
  return std::nullopt;
}

std::optional<room_books_checker::disagreement> room_books_checker::evicted_tombstone(
    table_model& t, const core::tombstone_evicted& evicted) {
  if (t.tombstones_max) {
    return disagreement{"evicted the tombstone of " + core::to_string(evicted.key) +
                            " with no insert into a full table before it",
                        {}};
  }
  // No size known: follow the table, judge nothing.
  tombstone_model& table = evicted.table == core::tombstone_table::before_open ? t.before_open : t.finished;
  table.keys.erase(evicted.key);
  std::erase(table.order, evicted.key);
  return std::nullopt;
}

std::optional<sim::finding> room_books_checker::follow(table_model& t, const core::event& what,
                                                       std::uint64_t step, std::size_t index) {
  std::optional<disagreement> d;
  if (t.owed_eviction || !t.owed_retirements.empty()) {
    if (const auto why = owed_decision(t, what)) d = disagreement{*why, {}};
  } else if (const auto* opened = std::get_if<core::room_opened>(&what.body)) {
    d = opened_room(t, *opened, index);
  } else if (const auto* admitted = std::get_if<core::chunk_admitted>(&what.body)) {
    d = admitted_chunk(t, *admitted, index);
  } else if (const auto* released = std::get_if<core::chunk_released>(&what.body)) {
    d = released_chunk(t, *released, index);
  } else if (const auto* closed = std::get_if<core::room_closed>(&what.body)) {
    d = closed_room(t, *closed, index);
  } else if (const auto* cleared = std::get_if<core::room_cleared>(&what.body)) {
    d = cleared_room(t, *cleared);
  } else if (const auto* evicted = std::get_if<core::tombstone_evicted>(&what.body)) {
    d = evicted_tombstone(t, *evicted);
  } else if (const auto* retired = std::get_if<core::tombstone_retired>(&what.body)) {
    d = disagreement{"retired the tombstone of " + core::to_string(retired->key) +
                         " that no open of a newer generation of its room retires",
                     {}};
  } else if (const auto* refused = std::get_if<core::lifetime_refused>(&what.body)) {
    if (const auto why = refusal_disagrees(t, *refused)) {
      d = disagreement{*why, {}};
    } else if (refused->error == core::lifetime_error::tombstoned && t.before_open.keys.contains(refused->key)) {
      consume(t, refused->key);
    }
  }
  if (!d) return std::nullopt;
  d->evidence.push_back(index);
  sort_evidence(d->evidence);
  return sim::finding{"I4", "I4: " + table_of(what.rank) + " " + d->why + " at step " + std::to_string(step),
                      std::move(d->evidence), {}};
}

// The decision the table owes next (an eviction for the insert just made, or a retirement
// for the open just made): nullopt when `what` is it.
std::optional<std::string> room_books_checker::owed_decision(table_model& t,
                                                             const core::event& what) {
  if (t.owed_eviction) {
    const auto [owed, table] = *t.owed_eviction;
    t.owed_eviction.reset();
    const auto* evicted = std::get_if<core::tombstone_evicted>(&what.body);
    if (evicted != nullptr && evicted->key == owed && evicted->table == table) return std::nullopt;
    return std::string("was full when it added a tombstone to its ") +
           (table == core::tombstone_table::before_open ? "before-open" : "finished") +
           " table, but instead of evicting that table's oldest, " + core::to_string(owed) +
           ", it decided " + core::describe(what);
  }
  const auto [owed, generation] = t.owed_retirements.front();
  t.owed_retirements.pop_front();
  const auto* retired = std::get_if<core::tombstone_retired>(&what.body);
  if (retired != nullptr && retired->key == owed && retired->opened == generation) return std::nullopt;
  return "opened generation " + std::to_string(generation) + " of room " +
         std::to_string(owed.room) + ", but instead of retiring the before-open tombstone of " +
         core::to_string(owed) + " it decided " + core::describe(what);
}

void room_books_checker::add_tombstone(table_model& t, core::tombstone_table which,
                                       core::room_key key) {
  tombstone_model& table = which == core::tombstone_table::before_open ? t.before_open : t.finished;
  if (t.tombstones_max && table.keys.size() >= *t.tombstones_max) {
    const core::room_key oldest = table.order.front();
    table.order.pop_front();
    table.keys.erase(oldest);
    t.owed_eviction = std::pair{oldest, which};
  }
  table.keys.insert(key);
  table.order.push_back(key);
}

void room_books_checker::consume(table_model& t, core::room_key key) {
  t.before_open.keys.erase(key);
  std::erase(t.before_open.order, key);
  add_tombstone(t, core::tombstone_table::finished, key);
}

std::optional<std::string> room_books_checker::refusal_disagrees(
    const table_model& t, const core::lifetime_refused& refusal) {
  const auto room = t.rooms.find(refusal.key);
  const bool tracked = room != t.rooms.end();
  const bool tombstoned = t.tombstoned(refusal.key);
  const std::string what = "refused " + core::to_string(refusal.key) + " as " +
                           core::to_string(refusal.error) + ", but its events ";
  switch (refusal.error) {
    case core::lifetime_error::unknown_room:
      if (tracked) return what + "keep the room open";
      break;
    case core::lifetime_error::already_open:
      if (!tracked) return what + "never opened it (or cleared it)";
      break;
    case core::lifetime_error::tombstoned:
      if (!tombstoned) return what + "left no tombstone for it";
      break;
    case core::lifetime_error::room_closed:
      if (tracked ? !room->second.closed : !tombstoned) return what + "never closed it";
      break;
    case core::lifetime_error::lease_underflow:
      if (!tracked || room->second.pending_leases != 0) {
        return what + (tracked ? "keep " + std::to_string(room->second.pending_leases) +
                                     " lease(s) pending"
                               : std::string("do not track the room"));
      }
      break;
    case core::lifetime_error::leases_pending:
      if (!tracked || room->second.pending_leases == 0) {
        return what + (tracked ? std::string("keep no lease pending") : std::string("do not track the room"));
      }
      break;
  }
  return std::nullopt;
}

std::optional<core::lifetime_error> room_books_checker::predict(
    const table_model& t, const sim::lifetime_misuse_attempted& call) {
  const auto room = t.rooms.find(call.key);
  const bool tracked = room != t.rooms.end();
  switch (call.call) {
    case sim::lifetime_call::open:
      if (t.tombstoned(call.key)) return core::lifetime_error::tombstoned;
      if (tracked) return core::lifetime_error::already_open;
      return std::nullopt;
    case sim::lifetime_call::try_acquire:
      if (!tracked) {
        return t.tombstoned(call.key) ? core::lifetime_error::room_closed
                                               : core::lifetime_error::unknown_room;
      }
      if (room->second.closed) return core::lifetime_error::room_closed;
      return std::nullopt;
    case sim::lifetime_call::release:
      if (!tracked) return core::lifetime_error::unknown_room;
      if (room->second.pending_leases == 0) return core::lifetime_error::lease_underflow;
      return std::nullopt;
    case sim::lifetime_call::clear:
      if (!tracked) return core::lifetime_error::unknown_room;
      if (room->second.pending_leases > 0) return core::lifetime_error::leases_pending;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<sim::finding> room_books_checker::answered(
    const sim::lifetime_misuse_answered& answer, std::uint64_t step, std::size_t index) {
  table_model& t = tables_[answer.rank];
  if (!t.careless) return std::nullopt;
  const sim::lifetime_misuse_attempted call = *t.careless;
  const std::optional<core::lifetime_error> expected = t.careless_expected;
  std::vector<std::size_t> evidence = std::move(t.careless_evidence);
  evidence.push_back(index);
  const std::vector<core::lifetime_refused> refusals = std::move(t.careless_refusals);
  const std::vector<std::string> other = std::move(t.careless_other);
  t.careless.reset();
  t.careless_expected.reset();
  t.careless_evidence.clear();
  t.careless_refusals.clear();
  t.careless_other.clear();

  std::vector<std::string> problems;
  if (!expected) {
    problems.push_back("by the table's own events the call is no misuse (the world made a call "
                       "it should not have, trusting the table's accessors)");
  } else {
    if (answer.error != expected) {
      problems.push_back(std::string("answered ") +
                         (answer.error ? core::to_string(*answer.error) : "accepted") +
                         ", its events say " + core::to_string(*expected));
    }
    if (refusals.size() != 1 || refusals.front().error != *expected ||
        refusals.front().key != call.key) {
      problems.push_back(std::to_string(refusals.size()) + " lifetime_refused event(s), expected "
                         "one: " + core::to_string(*expected) + " for " +
                         core::to_string(call.key));
    }
  }
  for (const std::string& decision : other) {
    problems.push_back("the refused call changed the table: " + decision);
  }
  if (problems.empty()) return std::nullopt;
  const std::string text = "misuse: careless " + std::string(sim::to_string(call.call)) + " of " +
                           core::to_string(call.key) + " on " + table_of(call.rank) +
                           " at step " + std::to_string(step) + ": " + problems.front();
  return sim::finding{"misuse", text, std::move(evidence), std::move(problems)};
}

}  // namespace kvsim::properties
