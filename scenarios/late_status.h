#pragma once
// The statuses a transfer worker or bootstrap thread could still write late for a room (fault
// `late_status`): SGLang's transfer worker and bootstrap threads write a room's status next to
// the scheduler, so a chunk job queued before the abort reports after the room Failed, the
// bootstrap thread's "waiting for input" lands after the first chunk moved the room on, a
// failed job reports after the scheduler erased the room's status. Only writes a worker could
// still make late, never progress the room has not made.
#include <optional>
#include <vector>

#include "core/kv_status.h"

namespace kvsim::scenarios {

// `now`: the room's status in the table (empty: none, or erased); `seen`: whether the
// scheduler ever read one for it (an erased room's late write is a failure).
std::vector<core::kv_status> late_statuses(std::optional<core::kv_status> now, bool seen);

}  // namespace kvsim::scenarios
