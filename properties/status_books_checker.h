#pragma once
// DOMAIN.md I4, the status table's books: what a scheduler reads from a rank's transfer
// status table (sim::status_read, recorded by the world when the value read changes, and once
// more at quiescence) must be what the table's own events gave the request: the last
// status_changed, or nothing after status_forgotten. A status_changed must also start from
// the status the events left. A table whose answers drift from its decisions lets a scheduler
// act on a status nobody set: a Failed request read as transferring keeps sending, a reused
// room id read with its predecessor's status finishes as the wrong outcome.
//
// The books must also follow the room's life on that rank (room_lifetimes' events), which the
// table only records: at every read, a room opened and not yet cleared holds Failed once it
// closed after its open (an abort or a failure), else Transferring once it admitted a chunk,
// else Bootstrapping; Failed is always allowed (a transfer may fail without a close). A table that refuses a legitimate update (an absent room's first status,
// a step forward, the Failed of an abort) keeps answering a status the room left behind.
//
// Its reports must be true too: a status_changed changes something and never leaves a final
// status or goes back; a status_update_ignored names the status the books hold and the one
// reason the table's rules give (an absent room's Failed, a final status, the same status, a
// step back), and is never emitted for an update the rules apply. A late write of the world's
// (sim::status_written) must be answered as the rules say, and be reported by the decision
// just before it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "core/kv_status.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class status_books_checker : public sim::checker {
 public:
  const char* name() const override { return "status_books"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  struct replayed {
    std::optional<core::kv_status> status;
    std::optional<std::size_t> since;  // the event that set it (or forgot it)
  };
  // A room's life on one rank, from room_lifetimes' events: what its status must be.
  struct room_life {
    std::size_t opened = 0;
    std::optional<std::size_t> admitted;  // the first chunk after the open
    std::optional<std::size_t> closed;    // the first close after the open
  };
  using rank_room = std::pair<core::rank_id, core::room_key>;

  // The table's last decision on a rank, for the late write it answers.
  struct last_decision {
    std::size_t index = 0;
    core::room_key key;
    core::kv_status status = core::kv_status::failed;  // the status applied or ignored
    bool applied = false;
  };

  void follow_room(const core::event& e, std::size_t index);
  std::optional<sim::finding> check_change(core::rank_id rank, const core::status_changed& change,
                                           std::uint64_t step, std::size_t index);
  std::optional<sim::finding> check_ignored(core::rank_id rank,
                                            const core::status_update_ignored& ignored,
                                            std::uint64_t step, std::size_t index);
  std::optional<sim::finding> check_written(const sim::status_written& write, std::uint64_t step,
                                            std::size_t index);
  std::optional<sim::finding> check_progress(const sim::status_read& read, std::uint64_t step,
                                             std::size_t index) const;

  std::map<rank_room, replayed> statuses_;
  std::map<rank_room, room_life> rooms_;  // opened and not yet cleared
  std::map<core::rank_id, last_decision> last_;
};

}  // namespace kvsim::properties
