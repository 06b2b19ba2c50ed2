#include "real_backend/nccl/rank_group.h"

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

core::reduce_op reduce_op_of(collective_kind kind) {
  return kind == collective_kind::all_reduce_min ? core::reduce_op::min : core::reduce_op::max;
}

// How long a member waits between looks at its peers while the host combines the values.
constexpr std::chrono::milliseconds look_interval{5};

}  // namespace

class rank_group::port final : public core::collective {
 public:
  port(rank_group& group, std::uint32_t index) : group_(group), index_(index) {}
  std::uint32_t group_size() const override { return group_.books_.size(); }
  std::uint32_t group_rank() const override { return index_; }
  std::int64_t all_reduce(std::int64_t value, core::reduce_op op) override {
    return group_.enter(index_,
                        op == core::reduce_op::min ? collective_kind::all_reduce_min
                                                   : collective_kind::all_reduce_max,
                        value);
  }
  void barrier() override { (void)group_.enter(index_, collective_kind::barrier, 0); }

 private:
  rank_group& group_;
  std::uint32_t index_;
};

rank_group::rank_group(std::uint32_t id, std::vector<core::rank_id> members, group_plane& plane,
                       std::chrono::milliseconds patience)
    : plane_(plane), patience_(patience), books_(id, members) {
  for (std::uint32_t i = 0; i < members.size(); ++i) ports_.push_back(std::make_unique<port>(*this, i));
}

rank_group::~rank_group() = default;

core::collective& rank_group::member(core::rank_id rank) {
  return *ports_[books_.index_of(rank)];
}

void rank_group::member_finished(core::rank_id rank) {
  const std::lock_guard lock(mutex_);
  books_.finish(books_.index_of(rank));
  changed_.notify_all();
}

std::uint32_t rank_group::barrier_entries(core::rank_id rank) const {
  const std::lock_guard lock(mutex_);
  return books_.barriers(books_.index_of(rank));
}

std::uint64_t rank_group::collectives_entered(core::rank_id rank) const {
  const std::lock_guard lock(mutex_);
  return books_.entered(books_.index_of(rank));
}

void rank_group::fail(const std::string& finding) {
  if (!failure_) failure_ = finding;
  changed_.notify_all();
  throw collective_divergence(*failure_);
}

std::int64_t rank_group::enter(std::uint32_t index, collective_kind kind, std::int64_t value) {
  std::unique_lock lock(mutex_);
  if (failure_) throw collective_divergence(*failure_);
  const std::uint64_t sequence = books_.enter(index, kind, value);
  if (auto mismatch = books_.mismatch(sequence)) fail(*mismatch);
  changed_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + patience_;
  if (plane_.across_devices()) {
    lock.unlock();
    return reduce_across_devices(index, sequence, kind, value, deadline);
  }
  return combine_on_host(lock, index, sequence, kind, deadline);
}

std::int64_t rank_group::reduce_across_devices(std::uint32_t index, std::uint64_t sequence,
                                               collective_kind kind, std::int64_t value,
                                               std::chrono::steady_clock::time_point deadline) {
  const wait_policy policy{
      // NCCL's own deadline only backs up the group's patience, which gives up first.
      deadline + std::chrono::seconds(5), [this, index, sequence, deadline] {
        const std::lock_guard lock(mutex_);
        if (failure_) return failure_;
        if (auto never = books_.never_completes(index, sequence)) return never;
        if (std::chrono::steady_clock::now() >= deadline) {
          return std::optional<std::string>(books_.timed_out(index, sequence, patience_));
        }
        return std::optional<std::string>();
      }};
  std::int64_t result = 0;
  try {
    result = plane_.reduce(index, value, reduce_op_of(kind), policy);
  } catch (const collective_divergence& d) {
    const std::lock_guard lock(mutex_);
    if (!failure_) failure_ = d.what();
    changed_.notify_all();
    throw;
  }
  return kind == collective_kind::barrier ? 0 : result;
}

std::int64_t rank_group::combine_on_host(std::unique_lock<std::mutex>& lock, std::uint32_t index,
                                         std::uint64_t sequence, collective_kind kind,
                                         std::chrono::steady_clock::time_point deadline) {
  if (books_.complete(sequence)) {
    // The last member to arrive carries the agreed value through the device.
    const std::int64_t combined = plane_.pass_through(books_.combined(sequence), reduce_op_of(kind),
                                                      wait_policy{deadline, {}});
    books_.forget(sequence);
    results_[sequence] = {kind == collective_kind::barrier ? 0 : combined, true, 0};
    changed_.notify_all();
  }
  while (!results_[sequence].complete) {
    if (failure_) throw collective_divergence(*failure_);
    if (auto never = books_.never_completes(index, sequence)) fail(*never);
    if (std::chrono::steady_clock::now() >= deadline) fail(books_.timed_out(index, sequence, patience_));
    changed_.wait_for(lock, look_interval);
  }
  result_slot& done = results_.at(sequence);
  const std::int64_t result = done.result;
  if (++done.left == books_.size()) results_.erase(sequence);
  return result;
}

}  // namespace kvsim::real
