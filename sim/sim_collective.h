#pragma once
// Collectives of one rank group (an attention or TP group), with a sequence number per
// member: the n-th collective a member enters must meet the n-th of every other member, with
// the same operation (DOMAIN.md I5). A member that waits is blocked in the world with
// "collective g<group> seq <n> <op>", and the group explains a deadlock by listing, for each
// open sequence number, who arrived and who did not.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ports.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim {

class collective_group {
 public:
  collective_group(world& w, group_id id, std::vector<core::rank_id> members);
  ~collective_group();

  // The port for one member rank; valid as long as the group lives.
  core::collective& member(core::rank_id rank);

  group_id id() const { return id_; }
  const std::vector<core::rank_id>& members() const { return members_; }

 private:
  class member_port;
  struct arrival {
    collective_op op = collective_op::barrier;
    std::vector<core::rank_id> arrived;
    std::vector<std::int64_t> values;
    std::int64_t result = 0;
    bool complete = false;
  };

  std::int64_t enter(core::rank_id rank, std::uint64_t sequence, collective_op op,
                     std::int64_t value);
  std::vector<std::string> explain() const;

  world& world_;
  group_id id_;
  std::vector<core::rank_id> members_;
  std::vector<std::unique_ptr<member_port>> ports_;
  std::map<std::uint64_t, arrival> open_;  // by sequence number
  wait_queue waiters_;
};

}  // namespace kvsim::sim
