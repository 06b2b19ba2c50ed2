#pragma once
// A rank group's collectives on real hardware (the attention group of the HiCache cases):
// core::collective for each member, one host thread per member. Every entry is logged on the
// host in the group's books (collective_books.h: which collective, which sequence number), so
// that divergence is a finding and not a hang (DOMAIN.md I5): a member that enters a different
// collective under the same sequence number, a member that waits for a peer whose thread has
// returned, or a wait past the group's patience. The waiting member's call then throws
// collective_divergence with the finding line, and so does every other member that waits.
// (Members in processes of their own meet over the control plane instead: wire_group.h.)
//
// The values meet on the group's data plane (group_plane): across devices, one NCCL rank per
// member reduces them; on one shared device the host combines them (the peers are simulated
// by host threads) and the agreed value passes through a one-rank NCCL communicator.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ports.h"
#include "real_backend/nccl/collective_books.h"
#include "real_backend/data_plane.h"

namespace kvsim::real {

class rank_group {
 public:
  rank_group(std::uint32_t id, std::vector<core::rank_id> members, group_plane& plane,
             std::chrono::milliseconds patience);
  ~rank_group();
  rank_group(const rank_group&) = delete;
  rank_group& operator=(const rank_group&) = delete;

  core::collective& member(core::rank_id rank);
  // The member's thread has returned: it enters no collective any more.
  void member_finished(core::rank_id rank);

  std::uint32_t barrier_entries(core::rank_id rank) const;
  std::uint64_t collectives_entered(core::rank_id rank) const;

 private:
  class port;
  // A collective's agreed value, from its last member's arrival until every member has read it.
  struct result_slot {
    std::int64_t result = 0;
    bool complete = false;
    std::uint32_t left = 0;
  };

  std::int64_t enter(std::uint32_t index, collective_kind kind, std::int64_t value);
  std::int64_t reduce_across_devices(std::uint32_t index, std::uint64_t sequence,
                                     collective_kind kind, std::int64_t value,
                                     std::chrono::steady_clock::time_point deadline);
  std::int64_t combine_on_host(std::unique_lock<std::mutex>& lock, std::uint32_t index,
                               std::uint64_t sequence, collective_kind kind,
                               std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void fail(const std::string& finding);

  group_plane& plane_;
  std::chrono::milliseconds patience_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  collective_books books_;
  std::vector<std::unique_ptr<port>> ports_;
  std::map<std::uint64_t, result_slot> results_;
  std::optional<std::string> failure_;  // the first finding: every later wait throws it
};

}  // namespace kvsim::real
