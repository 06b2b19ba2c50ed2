#include "sim/sim_collective.h"

#include <algorithm>

#include "sim/sim_assert.h"

namespace kvsim::sim {

class collective_group::member_port final : public core::collective {
 public:
  member_port(collective_group& group, core::rank_id rank, std::uint32_t index)
      : group_(group), rank_(rank), index_(index) {}

  std::uint32_t group_size() const override {
    return static_cast<std::uint32_t>(group_.members_.size());
  }
  std::uint32_t group_rank() const override { return index_; }
  std::int64_t all_reduce(std::int64_t value, core::reduce_op op) override {
    return group_.enter(rank_, ++sequence_,
                        op == core::reduce_op::min ? collective_op::all_reduce_min
                                                   : collective_op::all_reduce_max,
                        value);
  }
  void barrier() override { group_.enter(rank_, ++sequence_, collective_op::barrier, 0); }

 private:
  collective_group& group_;
  core::rank_id rank_;
  std::uint32_t index_;
  std::uint64_t sequence_ = 0;
};

collective_group::collective_group(world& w, group_id id, std::vector<core::rank_id> members)
    : world_(w), id_(id), members_(std::move(members)), waiters_(w, "collective") {
  for (std::uint32_t i = 0; i < members_.size(); ++i) {
    ports_.push_back(std::make_unique<member_port>(*this, members_[i], i));
  }
  world_.add_wait_explainer([this] { return explain(); });
}

collective_group::~collective_group() = default;

core::collective& collective_group::member(core::rank_id rank) {
  const auto it = std::find(members_.begin(), members_.end(), rank);
  KVSIM_SIM_ASSERT(it != members_.end(), "rank is not a member of this collective group");
  return *ports_[static_cast<std::size_t>(it - members_.begin())];
}

std::int64_t collective_group::enter(core::rank_id rank, std::uint64_t sequence,
                                     collective_op op, std::int64_t value) {
  world_.step();  // entering a collective is a preemption point
  const std::uint64_t object = object_token(object_kind::collective_group, id_);
  world_.touch(object, access::write);
  world_.emit(collective_entered{id_, sequence, rank, op, value});
  arrival& slot = open_[sequence];
  if (slot.arrived.empty()) {
    slot.op = op;
  } else if (slot.op != op) {
    world_.report(finding{"I5",
                          "I5: rank " + std::to_string(rank) + " entered " + to_string(op) +
                              " as collective #" + std::to_string(sequence) + " of group g" +
                              std::to_string(id_) + ", where rank " +
                              std::to_string(slot.arrived.front()) + " entered " +
                              to_string(slot.op),
                          {world_.events().size() - 1},
                          {}});
  }
  slot.arrived.push_back(rank);
  slot.values.push_back(value);
  if (slot.arrived.size() == members_.size()) {
    std::int64_t result = slot.values.front();
    for (std::int64_t v : slot.values) {
      if (op == collective_op::all_reduce_min) result = std::min(result, v);
      if (op == collective_op::all_reduce_max) result = std::max(result, v);
    }
    slot.result = op == collective_op::barrier ? 0 : result;
    slot.complete = true;
    waiters_.notify_all();
  }
  const wait_reason reason{wait_kind::collective, to_string(op), id_, sequence, rank};
  while (!open_[sequence].complete) waiters_.wait(reason);
  // Leaving only reads the result: the members leave in any order, and a completed slot is
  // kept (one per collective of the run) rather than erased by whoever leaves last.
  world_.touch(object, access::read);
  const std::int64_t result = open_.at(sequence).result;
  world_.emit(collective_left{id_, sequence, rank, result});
  return result;
}

std::vector<std::string> collective_group::explain() const {
  std::vector<std::string> lines;
  for (const auto& [sequence, slot] : open_) {
    if (slot.complete) continue;
    std::string arrived;
    std::string missing;
    for (core::rank_id rank : members_) {
      const bool in = std::find(slot.arrived.begin(), slot.arrived.end(), rank) != slot.arrived.end();
      std::string& list = in ? arrived : missing;
      if (!list.empty()) list += ",";
      list += "r" + std::to_string(rank);
    }
    lines.push_back("group g" + std::to_string(id_) + " collective #" + std::to_string(sequence) +
                    " (" + to_string(slot.op) + "): entered by [" + arrived +
                    "], never entered by [" + missing + "]");
  }
  return lines;
}

}  // namespace kvsim::sim
