#pragma once
// What every step of a run touched, declared by the code that touches it: the independence
// relation of the model checker (sim/search/dpor.h). A step is what one schedule decision starts:
// an actor running from one preemption point to the next, or one delivery. Two steps are
// dependent exactly when they access a common shared object and one of them writes it.
//
// Objects are named by 64-bit tokens: a kind in the top byte, which one below. What is
// declared where:
// - every actor step writes its home object and its own actor (its run state). A rank's
//   actors live in the rank (everything rank-local without a finer token: its core objects,
//   scenario flags); a device's actors declare what they touch (a transfer executor lives in
//   its transfer's progress; a storage I/O actor declares the storage's books and each
//   read's progress and state), and whoever calls the device declares it;
// - a wake that changes an actor's state writes that actor; one that finds it awake reads it
//   (an actor object is named by the actor's stable identity, never by its id);
// - simulated memory declares each page it reads or writes (kv_memory.cc), so a transfer
//   writing a decode page and the decode rank's other steps are independent unless one of
//   them reads that page;
// - mailboxes, wait queues, gates, collective groups, liveness and the scenario's cross-rank
//   flags are objects of their own, touched by whoever reads or writes them, whatever rank
//   it runs on. Nothing is read across ranks without a declaration (a debug check in the
//   tests swaps independent neighbours and compares the final state).
// Fresh names (actor ids, message ids, delivery ids, transfer handles) are not objects: two
// steps that each take one end with the same state up to renaming, and the search names
// threads by stable identities (thread_identity below), not by ids.
//
// Virtual time is not an object either: it advances only when nothing can run, so the world
// records the advance as a fence between two steps, after everything before it and before
// everything after it, never reordered with anything.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace kvsim::sim {

enum class object_kind : std::uint8_t {
  rank = 1,
  actor = 2,
  memory_page = 3,
  mailbox = 4,
  wait_queue = 5,
  gate = 6,
  collective_group = 7,
  liveness = 8,
  flag = 9,       // a scenario's own cross-rank flag (e.g. "decode rank d is done")
  network_log = 10,  // what the adversary remembers of messages to a rank
  engine = 11,       // a rank's transfer engine: its holds, whether it stopped
  transfer = 12,     // one transfer of an engine: its progress and state
  storage = 13,      // a rank's storage reads
  request_progress = 14,  // pages of a held request copied to a rank, over its transfers
  storage_read = 15,      // one storage read: its state, or its progress
  store_jobs = 16,        // a rank's store engine: its jobs in flight and completions
};

constexpr std::uint64_t object_token(object_kind kind, std::uint64_t which) {
  return (std::uint64_t{static_cast<std::uint8_t>(kind)} << 56) | (which & ((std::uint64_t{1} << 56) - 1));
}
constexpr std::uint64_t page_object(core::rank_id rank, core::page_index page) {
  return object_token(object_kind::memory_page, (std::uint64_t{rank} << 32) | page);
}
constexpr object_kind kind_of(std::uint64_t token) { return static_cast<object_kind>(token >> 56); }

// A stable token for a name (FNV-1a): objects created by name, stable across runs.
constexpr std::uint64_t name_token(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// read and write as usual; update: a change that commutes with every other update of the
// same object (adding oneself to a wait queue's waiters, or taking oneself off): two updates
// are independent, an update and a read or a write are not.
enum class access : std::uint8_t { read = 0, write = 1, update = 2 };

// Two accesses of one step to one object, as one: equal modes stay, anything else writes.
constexpr access combined(access a, access b) { return a == b ? a : access::write; }

struct object_access {
  std::uint64_t object = 0;
  access mode = access::read;
  // A write of an actor object that made a blocked actor runnable: the woken actor could not
  // have run before this step (the search never tries to reorder the two).
  bool wake = false;
};

struct step_record {
  std::uint64_t thread = 0;    // the stable identity of who ran (thread_identity)
  std::uint64_t subject = 0;   // the decision's subject (actor id or delivery_bit | id)
  std::uint64_t created_at = 0;  // the step that created this thread (0: before the run)
  bool after_fence = false;    // virtual time advanced just before this step
  std::vector<object_access> accesses;  // unique by object; a write hides a read
};

// Whether two steps are dependent: a common object that one writes, or that one reads and
// the other updates.
bool conflicts(const std::vector<object_access>& a, const std::vector<object_access>& b);

// The record of a run's steps, kept by the world when asked (world_config::record_steps):
// entry s - 1 is step s, the one schedule decision s - 1 chose (events carry the same step
// numbers).
class step_log {
 public:
  void begin_step(std::uint64_t thread, std::uint64_t subject, std::uint64_t created_at,
                  bool after_fence);
  // Adds an access to the current step; nothing before the first step (setup).
  void touch(std::uint64_t object, access mode, bool wake = false);

  const std::vector<step_record>& steps() const { return steps_; }
  bool empty() const { return steps_.empty(); }

 private:
  std::vector<step_record> steps_;
};

}  // namespace kvsim::sim
