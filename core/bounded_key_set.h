#pragma once
// A set of room keys with a fixed capacity and an explicit eviction order: inserting into a
// full set evicts the key inserted first, and says which. Every operation is O(log n) in the
// set's size, and the memory it holds never exceeds its capacity: the shape of every table
// the core keeps about requests that are over (tombstones, recently finished requests).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/ids.h"

namespace kvsim::core {

class bounded_key_set {
 public:
  explicit bounded_key_set(std::uint32_t capacity);

  // Adds `key` (a key already there keeps its place). Returns the key evicted to make room.
  std::optional<room_key> insert(room_key key);
  bool erase(room_key key);
  bool contains(room_key key) const { return position_.contains(key); }
  // Removes and returns every key of `room` with a generation below `generation`.
  std::vector<room_key> erase_older(room_id room, generation_t generation);

  std::uint32_t size() const { return static_cast<std::uint32_t>(position_.size()); }
  std::uint32_t capacity() const { return capacity_; }

 private:
  std::uint32_t capacity_;
  std::uint64_t next_position_ = 0;
  std::map<room_key, std::uint64_t> position_;  // key -> when it was inserted
  std::map<std::uint64_t, room_key> by_age_;    // oldest first: the eviction order
};

}  // namespace kvsim::core
