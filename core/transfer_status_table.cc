#include "core/transfer_status_table.h"

namespace kvsim::core {

status_update transfer_status_table::update(room_key key, kv_status status) {
  const auto it = statuses_.find(key);
  if (it == statuses_.end()) {
    if (status == kv_status::failed) {
      return ignore(key, std::nullopt, status, status_ignore_reason::failed_for_absent_room);
    }
    statuses_.emplace(key, status);
    sink_.emit_built(event{rank_, status_changed{key, std::nullopt, status}});
    return status_update::applied;
  }
  const kv_status current = it->second;
  if (is_terminal(current)) {
    return ignore(key, current, status, status_ignore_reason::terminal);
  }
  if (status == current) return ignore(key, current, status, status_ignore_reason::unchanged);
  if (status != kv_status::failed && status < current) {
    return ignore(key, current, status, status_ignore_reason::regression);
  }
  it->second = status;
  sink_.emit_built(event{rank_, status_changed{key, current, status}});
  return status_update::applied;
}

void transfer_status_table::erase(room_key key) {
  if (statuses_.erase(key) != 0) sink_.emit_built(event{rank_, status_forgotten{key}});
}

std::optional<kv_status> transfer_status_table::get(room_key key) const {
  const auto it = statuses_.find(key);
  if (it == statuses_.end()) return std::nullopt;
  return it->second;
}

status_update transfer_status_table::ignore(room_key key, std::optional<kv_status> current,
                                            kv_status attempted, status_ignore_reason reason) {
  sink_.emit_built(event{rank_, status_update_ignored{key, current, attempted, reason}});
  return status_update::ignored;
}

}  // namespace kvsim::core
