#pragma once
// Transfer status per (room, generation), with DOMAIN.md's semantics:
//   Failed < Bootstrapping < WaitingForInput < Transferring < Success.
// Progress only moves up; Failed may interrupt any non-terminal status and is sticky;
// Success is final too. A Failed update for a room that has no status is ignored: the room
// was already cleared, and recreating it as Failed would poison the next request that reuses
// the room id. Every update, applied or ignored, is emitted.
#include <cstdint>
#include <map>
#include <optional>

#include "core/events.h"
#include "core/ids.h"
#include "core/kv_status.h"
#include "core/ports.h"

namespace kvsim::core {

enum class status_update : std::uint8_t { applied, ignored };

class transfer_status_table {
 public:
  transfer_status_table(rank_id rank, event_sink& sink) : rank_(rank), sink_(sink) {}

  status_update update(room_key key, kv_status status);
  std::optional<kv_status> get(room_key key) const;
  // Forget a finished room (its id may be reused by the next request).
  void erase(room_key key);
  std::uint32_t size() const { return static_cast<std::uint32_t>(statuses_.size()); }

 private:
  status_update ignore(room_key key, std::optional<kv_status> current, kv_status attempted,
                       status_ignore_reason reason);

  rank_id rank_;
  event_sink& sink_;
  std::map<room_key, kv_status> statuses_;
};

}  // namespace kvsim::core
