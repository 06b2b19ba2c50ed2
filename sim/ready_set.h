#pragma once
// The actors that may run next, as one bit per actor id. Every step makes its actor ready
// again and every pick takes one out, so insert and erase are the hot operations: a bit each,
// where the sorted vector this replaces shifted every later id (a cost that grew with the
// world: docs/performance.md). Listing the members, which each schedule decision does to
// build its options, walks the words in ascending id order: the options' order stays the
// ascending one every strategy and recorded trace was written with.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/actor_name.h"
#include "sim/sim_assert.h"

namespace kvsim::sim {

class ready_set {
 public:
  // Room for `id`, so that inserting it cannot allocate (or throw): the world takes this
  // room before it changes an actor's state, never halfway through a change.
  void make_room_for(actor_id id) {
    const std::size_t word = id / 64;
    if (word >= words_.size()) words_.resize(word + 1, 0);
  }
  void insert(actor_id id) {
    const std::size_t word = id / 64;
    if (word >= words_.size()) words_.resize(word + 1, 0);
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    KVSIM_SIM_ASSERT((words_[word] & bit) == 0, "an actor is made ready twice");
    words_[word] |= bit;
    ++size_;
  }
  void erase(actor_id id) {
    const std::size_t word = id / 64;
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    KVSIM_SIM_ASSERT(word < words_.size() && (words_[word] & bit) != 0,
                     "only a ready actor leaves the ready set");
    words_[word] &= ~bit;
    --size_;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The lowest ready id; the set must not be empty.
  actor_id front() const {
    for (std::size_t word = 0; word < words_.size(); ++word) {
      if (words_[word] != 0) return static_cast<actor_id>(word * 64 + std::countr_zero(words_[word]));
    }
    KVSIM_SIM_ASSERT(false, "front() of an empty ready set");
    return no_actor;
  }
  // The n-th lowest ready id (from 0); n must be below size().
  actor_id nth(std::size_t n) const {
    for (std::size_t word = 0; word < words_.size(); ++word) {
      std::uint64_t bits = words_[word];
      const auto count = static_cast<std::size_t>(std::popcount(bits));
      if (n >= count) {
        n -= count;
        continue;
      }
      for (; n > 0; --n) bits &= bits - 1;
      return static_cast<actor_id>(word * 64 + std::countr_zero(bits));
    }
    KVSIM_SIM_ASSERT(false, "nth() beyond the ready set");
    return no_actor;
  }
  // Calls f(id) for every ready id in ascending order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t word = 0; word < words_.size(); ++word) {
      for (std::uint64_t bits = words_[word]; bits != 0; bits &= bits - 1) {
        f(static_cast<actor_id>(word * 64 + std::countr_zero(bits)));
      }
    }
  }

 private:
  std::vector<std::uint64_t> words_;
  std::size_t size_ = 0;
};

}  // namespace kvsim::sim
