#pragma once
// DOMAIN.md I4, the room table's books: each prefill rank's room_lifetimes reports every
// decision it takes (room_opened, chunk_admitted, chunk_released, room_closed, room_cleared,
// tombstone_evicted, lifetime_refused). The checker replays them into its own model of the
// table, rooms with their pending chunk leases and the bounded tombstone table in insertion
// order, and holds every report against the model:
//   - a room opens once, never while tombstoned; a chunk is admitted only to an open room that
//     is not closed, and the counts of pending leases it reports step by one from the model's;
//   - a close reports the model's pending leases, and "before open" exactly when the model
//     knows no open room (then it adds a tombstone unless one is there);
//   - a room is cleared only with no lease pending; a closed one leaves a tombstone;
//   - tombstones live in two tables, as core/room_lifetimes.h promises: a close of a room
//     never opened goes to the before-open table, a cleared closed room to the finished one;
//     a refused open of a before-open tombstone moves it to the finished table; an open
//     retires every before-open tombstone of an older generation of its room, right after
//     it (tombstone_retired, in key order); each table evicts exactly when an insert finds
//     it full (the size comes from the world's sim::lifetimes_created), evicts its oldest,
//     and says so right after the insert. An engine sizes the tables on that promise, and a
//     table that evicts early, the wrong entry, or lets other traffic push out a before-open
//     tombstone readmits the late sender B10's tombstone exists to stop;
//   - a refusal names a reason the model agrees with (a close-before-open refusal for a room
//     the model never tombstoned is a report an operator would act on wrongly).
// A careless caller (fault `misuse`) also calls the table wrongly between
// sim::lifetime_misuse_attempted and sim::lifetime_misuse_answered: the model predicts the
// refusal, and the answer, the one lifetime_refused inside, and "nothing else decided" are
// held against it. The monitor's sim::room_table_read after each careless call must answer
// what the model holds for every room (tracked, admitting, closed, tombstoned, pending).
// The model follows the table's own events, so it holds under every variant (the bugs live in
// the sender, which calls the table; the table keeps honest books of whatever it is asked).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "properties/dense_index_map.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class room_books_checker : public sim::checker {
 public:
  const char* name() const override { return "room_books"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  struct room_model {
    bool closed = false;
    std::uint32_t pending_leases = 0;
    std::size_t since = 0;  // the event that last changed it
  };
  // One tombstone table: its keys and their insertion order (the eviction rule).
  struct tombstone_model {
    std::set<core::room_key> keys;
    std::deque<core::room_key> order;
  };
  struct table_model {
    std::optional<std::uint32_t> tombstones_max;  // unknown: evictions are not judged
    std::map<core::room_key, room_model> rooms;
    tombstone_model before_open;
    tombstone_model finished;
    // What the table owes right after an insert into a full table, or after an open that
    // retires older generations' before-open tombstones: the next decisions must be these.
    std::optional<std::pair<core::room_key, core::tombstone_table>> owed_eviction;
    std::deque<std::pair<core::room_key, core::generation_t>> owed_retirements;
    // A careless call in flight: the predicted refusal and what the table decided inside.
    std::optional<sim::lifetime_misuse_attempted> careless;
    std::optional<core::lifetime_error> careless_expected;
    std::vector<std::size_t> careless_evidence;
    std::vector<core::lifetime_refused> careless_refusals;
    std::vector<std::string> careless_other;

    bool tombstoned(core::room_key key) const {
      return before_open.keys.contains(key) || finished.keys.contains(key);
    }
  };

  std::optional<sim::finding> decided(const core::event& what, std::uint64_t step,
                                      std::size_t index);
  std::optional<sim::finding> follow(table_model& t, const core::event& what, std::uint64_t step,
                                     std::size_t index);
  // What the books and a decision disagree on: the words, and the earlier events that show it
  // (follow adds the decision's own).
  struct disagreement {
    std::string why;
    std::vector<std::size_t> evidence;
  };
  // Each decision of the table, followed in its model (`index`: the decision's event).
  static std::optional<disagreement> opened_room(table_model& t, const core::room_opened& opened,
                                                 std::size_t index);
  static std::optional<disagreement> admitted_chunk(table_model& t, const core::chunk_admitted& admitted,
                                                    std::size_t index);
  static std::optional<disagreement> released_chunk(table_model& t, const core::chunk_released& released,
                                                    std::size_t index);
  static std::optional<disagreement> closed_room(table_model& t, const core::room_closed& closed,
                                                 std::size_t index);
  static std::optional<disagreement> cleared_room(table_model& t, const core::room_cleared& cleared);
  static std::optional<disagreement> evicted_tombstone(table_model& t,
                                                       const core::tombstone_evicted& evicted);
  static void add_tombstone(table_model& t, core::tombstone_table which, core::room_key key);
  // The refused open of a before-open tombstone: its incarnation is over (finished table).
  static void consume(table_model& t, core::room_key key);
  static std::optional<std::string> owed_decision(table_model& t, const core::event& what);
  std::optional<sim::finding> check_read(const sim::room_table_read& read, std::uint64_t step,
                                         std::size_t index) const;
  std::optional<sim::finding> answered(const sim::lifetime_misuse_answered& answer,
                                       std::uint64_t step, std::size_t index);
  static std::optional<core::lifetime_error> predict(const table_model& t,
                                                     const sim::lifetime_misuse_attempted& call);
  static std::optional<std::string> refusal_disagrees(const table_model& t,
                                                      const core::lifetime_refused& refusal);

  dense_index_map<core::rank_id, table_model> tables_;
};

}  // namespace kvsim::properties
