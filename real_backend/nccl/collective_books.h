#pragma once
// What a rank group's members entered, collective by collective, and what that proves (DOMAIN.md
// I5): no threads and no wire, only the books. The same books serve a group whose members are
// host threads of one process (rank_group.h: each member writes its own entry) and a member
// whose peers are other processes (wire_group.h: the peers' entries come over the control
// plane), so both report a divergence in the same words:
//   - two members entered different collectives under one sequence number (named by the
//     lower member as "where", whichever came first, so that every process that sees both
//     entries writes the same line);
//   - a member waits in a collective that a peer, which has returned, never entered;
//   - a member waited past the group's patience (who has not come, and what each did last).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "real_backend/nccl/collective_kind.h"

namespace kvsim::real {

class collective_books {
 public:
  collective_books(std::uint32_t group_id, std::vector<core::rank_id> members);

  std::uint32_t group_id() const { return id_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(members_.size()); }
  // The member's index in the group; real_backend_error when `rank` is not a member.
  std::uint32_t index_of(core::rank_id rank) const;
  core::rank_id rank_of(std::uint32_t index) const { return members_.at(index).rank; }

  // Member `index` enters `kind` with `value` as its next collective; returns its sequence
  // number (1 for the first).
  std::uint64_t enter(std::uint32_t index, collective_kind kind, std::int64_t value);
  // Member `index` has returned: it enters no collective any more.
  void finish(std::uint32_t index);

  // The I5 line when two members entered different collectives under `sequence`.
  std::optional<std::string> mismatch(std::uint64_t sequence) const;
  // Every member entered `sequence`.
  bool complete(std::uint64_t sequence) const;
  // The agreed value of a complete `sequence`: MIN or MAX of the members' values (a barrier:
  // MAX of zeros).
  std::int64_t combined(std::uint64_t sequence) const;
  // The values of `sequence` are no longer needed.
  void forget(std::uint64_t sequence) { values_.erase(sequence); }
  // Why the wait of `index` in `sequence` can never end (a peer returned without it), if so.
  std::optional<std::string> never_completes(std::uint32_t index, std::uint64_t sequence) const;
  // The finding of `index` waiting `patience` in `sequence`.
  std::string timed_out(std::uint32_t index, std::uint64_t sequence,
                        std::chrono::milliseconds patience) const;

  std::uint64_t entered(std::uint32_t index) const { return members_.at(index).kinds.size(); }
  // The last collective `index` entered; empty before its first.
  std::optional<collective_kind> last_kind(std::uint32_t index) const;
  std::uint32_t barriers(std::uint32_t index) const { return members_.at(index).barriers; }
  bool finished(std::uint32_t index) const { return members_.at(index).finished; }

 private:
  struct member {
    core::rank_id rank = 0;
    std::vector<collective_kind> kinds;  // by sequence number - 1
    std::uint32_t barriers = 0;
    bool finished = false;
  };
  std::string what_of(std::uint32_t index, std::uint64_t sequence) const;

  std::uint32_t id_;
  std::vector<member> members_;
  // Per sequence number not yet forgotten: each member's value once it entered.
  std::map<std::uint64_t, std::vector<std::optional<std::int64_t>>> values_;
};

}  // namespace kvsim::real
