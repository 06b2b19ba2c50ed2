#pragma once
// Core variants: each historical bug of DOMAIN.md (B1..B15, H1..H3) is a named policy that
// restores the old behaviour. They exist so the harness can prove, red then green, that it
// catches every one; production is `safe`, every flag off.
//
// Only the harness's build of the core (the kvsim_core target, which defines
// KVSIM_HISTORICAL_BUGS=1) can switch a bug on. Every other build, and the library that
// `cmake --install` ships as kvsim::core, has no bug variant to make: has() is a constant
// false, so each bug's branch in the core is dead code the compiler drops, and the bugs'
// names and the calls that would switch one on are not declared.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#ifndef KVSIM_HISTORICAL_BUGS
#define KVSIM_HISTORICAL_BUGS 0
#endif

namespace kvsim::core {

// True only in the harness's build of the core.
inline constexpr bool historical_bugs_built = KVSIM_HISTORICAL_BUGS != 0;

enum class bug : std::uint8_t {
  b1_destination_reuse,      // decode frees destination pages at abort, while prefill writes
  b2_early_ack,              // prefill ACKs an ABORT on receipt, before its writes stopped
  b3_source_reuse,           // prefill frees source pages on Failed while a worker reads them
  b4_first_sibling_returns,  // a chunk is released when its first future ends, siblings run on
  b5_lost_ack_target,        // clearing the room drops the pending ACK target
  b6_one_ack_target,         // one ACK target per room: a second decode rank overwrites it
  b7_cleared_room_ack,       // ABORT for a cleared room with a chunk outstanding: ACKed at once
  b8_local_failure_release,  // failures decode did not start (prefill failure) release at once
  b9_target_before_failed,   // ACK target registered before the room is marked Failed/closed
  b10_no_tombstone,          // ABORT before open leaves no tombstone: the late sender starts
  b11_stale_ack,             // ACKs matched by room only: an old generation's ACK counts
  b12_deadline_release,      // a transport deadline releases pages still being written
  h1_early_return,           // missing/pending ranks return before the barrier active joins
  h2_divergent_cleanup,      // active rank releases host pages before the group barrier
  h3_skip_reduce,            // rank-local early return skips the all_reduce peers enter
  b13_store_done_by_request,  // a store completion is counted by request id, not by job
  b14_preempt_drops_store,    // preemption resets the store tracker, freeing pages it reads
  b15_unleased_store,         // a store job holds no reference on the pages it reads
};
inline constexpr std::size_t bug_count = 18;

#if KVSIM_HISTORICAL_BUGS
const char* to_string(bug b);       // "B1".."B12", "H1".."H3"
const char* describe(bug b);        // one line, as in DOMAIN.md
std::optional<bug> bug_from_string(std::string_view name);
#endif

class variant {
 public:
  static constexpr variant safe() { return variant{}; }
#if KVSIM_HISTORICAL_BUGS
  static variant with(bug b) {
    variant v;
    v.on_[static_cast<std::size_t>(b)] = true;
    return v;
  }
#endif
  // "safe" or a bug name ("B1".."H3"); empty when the name is unknown, and for every bug name
  // where historical bugs are not built.
  static std::optional<variant> from_name(std::string_view name);

  constexpr bool has(bug b) const {
    return historical_bugs_built && on_[static_cast<std::size_t>(b)];
  }
  bool is_safe() const;
  std::string name() const;  // "safe", or the bug names joined with '+'

  friend bool operator==(const variant&, const variant&) = default;

 private:
  std::array<bool, bug_count> on_{};
};

}  // namespace kvsim::core
