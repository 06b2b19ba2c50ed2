#pragma once
// DOMAIN.md I4, the status table's books: what a scheduler reads from a rank's transfer
// status table (sim::status_read, recorded by the world when the value read changes, and once
// more at quiescence) must be what the table's own events gave the request: the last
// status_changed, or nothing after status_forgotten. A status_changed must also start from
// the status the events left. A table whose answers drift from its decisions lets a scheduler
// act on a status nobody set: a Failed request read as transferring keeps sending, a reused
// room id read with its predecessor's status finishes as the wrong outcome.
#include <cstddef>
#include <map>
#include <optional>
#include <utility>

#include "core/ids.h"
#include "core/kv_status.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class status_books_checker : public sim::checker {
 public:
  const char* name() const override { return "status_books"; }
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  struct replayed {
    std::optional<core::kv_status> status;
    std::optional<std::size_t> since;  // the event that set it (or forgot it)
  };
  std::map<std::pair<core::rank_id, core::room_key>, replayed> statuses_;
};

}  // namespace kvsim::properties
