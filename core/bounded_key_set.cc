#include "core/bounded_key_set.h"

#include "core/invariant.h"

namespace kvsim::core {

bounded_key_set::bounded_key_set(std::uint32_t capacity) : capacity_(capacity) {
  KVSIM_INVARIANT(capacity > 0, "a bounded key set needs room for at least one key");
}

std::optional<room_key> bounded_key_set::insert(room_key key) {
  if (position_.contains(key)) return std::nullopt;
  std::optional<room_key> evicted;
  if (position_.size() >= capacity_) {
    const auto oldest = by_age_.begin();
    evicted = oldest->second;
    position_.erase(oldest->second);
    by_age_.erase(oldest);
  }
  position_.emplace(key, next_position_);
  by_age_.emplace(next_position_, key);
  ++next_position_;
  KVSIM_INVARIANT(position_.size() == by_age_.size() && position_.size() <= capacity_,
                  "a bounded key set's index and age order disagree, or it outgrew its capacity");
  return evicted;
}

bool bounded_key_set::erase(room_key key) {
  const auto it = position_.find(key);
  if (it == position_.end()) return false;
  by_age_.erase(it->second);
  position_.erase(it);
  return true;
}

std::vector<room_key> bounded_key_set::erase_older(room_id room, generation_t generation) {
  std::vector<room_key> erased;
  for (auto it = position_.lower_bound(room_key{room, 0});
       it != position_.end() && it->first.room == room && it->first.generation < generation;) {
    erased.push_back(it->first);
    by_age_.erase(it->second);
    it = position_.erase(it);
  }
  return erased;
}

}  // namespace kvsim::core
