#include "real_backend/rank_group.h"

#include <algorithm>

#include "real_backend/errors.h"

namespace kvsim::real {

const char* to_string(collective_kind kind) {
  switch (kind) {
    case collective_kind::all_reduce_min:
      return "all_reduce_min";
    case collective_kind::all_reduce_max:
      return "all_reduce_max";
    case collective_kind::barrier:
      return "barrier";
  }
  return "unknown-collective";
}

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
  std::uint32_t group_size() const override {
    return static_cast<std::uint32_t>(group_.members_.size());
  }
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
    : id_(id), plane_(plane), patience_(patience) {
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    members_.push_back(member_state{members[i], 0, {}, 0, false});
    ports_.push_back(std::make_unique<port>(*this, i));
  }
}

rank_group::~rank_group() = default;

std::size_t rank_group::index_of(core::rank_id rank) const {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].rank == rank) return i;
  }
  throw real_backend_error("rank " + std::to_string(rank) + " is not a member of group g" +
                           std::to_string(id_));
}

core::collective& rank_group::member(core::rank_id rank) { return *ports_[index_of(rank)]; }

void rank_group::member_finished(core::rank_id rank) {
  const std::lock_guard lock(mutex_);
  members_[index_of(rank)].finished = true;
  changed_.notify_all();
}

std::uint32_t rank_group::barrier_entries(core::rank_id rank) const {
  const std::lock_guard lock(mutex_);
  return members_[index_of(rank)].barriers;
}

std::uint64_t rank_group::collectives_entered(core::rank_id rank) const {
  const std::lock_guard lock(mutex_);
  return members_[index_of(rank)].entered;
}

void rank_group::fail(const std::string& finding) {
  if (!failure_) failure_ = finding;
  changed_.notify_all();
  throw collective_divergence(*failure_);
}

std::string rank_group::what_of(std::uint32_t index, std::uint64_t sequence) const {
  return std::string(to_string(members_[index].kinds[sequence - 1])) + " (collective #" +
         std::to_string(sequence) + " of group g" + std::to_string(id_) + ")";
}

std::optional<std::string> rank_group::never_completes(std::uint32_t index,
                                                       std::uint64_t sequence) const {
  for (std::uint32_t k = 0; k < members_.size(); ++k) {
    const member_state& peer = members_[k];
    if (k == index || peer.entered >= sequence || !peer.finished) continue;
    const std::string returned =
        peer.entered == 0 ? "it returned without entering any collective of the group"
                          : "it returned after collective #" + std::to_string(peer.entered) + " (" +
                                to_string(peer.kinds.back()) + ")";
    return "I5: rank " + std::to_string(members_[index].rank) + " waits in " +
           what_of(index, sequence) + ", which rank " + std::to_string(peer.rank) +
           " never entered: " + returned;
  }
  return std::nullopt;
}

std::string rank_group::timed_out(std::uint32_t index, std::uint64_t sequence) const {
  std::string missing;
  for (std::uint32_t k = 0; k < members_.size(); ++k) {
    const member_state& peer = members_[k];
    if (k == index || peer.entered >= sequence) continue;
    if (!missing.empty()) missing += ", ";
    missing += "rank " + std::to_string(peer.rank) + " (its last: " +
               (peer.entered == 0
                    ? std::string("none")
                    : "#" + std::to_string(peer.entered) + " " + to_string(peer.kinds.back())) +
               ")";
  }
  return "I5: rank " + std::to_string(members_[index].rank) + " waited " +
         std::to_string(patience_.count()) + " ms in " + what_of(index, sequence) + " without " +
         (missing.empty() ? std::string("completing it") : missing + " entering it");
}

std::int64_t rank_group::enter(std::uint32_t index, collective_kind kind, std::int64_t value) {
  std::unique_lock lock(mutex_);
  if (failure_) throw collective_divergence(*failure_);
  member_state& me = members_[index];
  const std::uint64_t sequence = ++me.entered;
  me.kinds.push_back(kind);
  if (kind == collective_kind::barrier) ++me.barriers;
  slot& s = slots_[sequence];
  if (s.arrived.empty()) {
    s.kind = kind;
  } else if (s.kind != kind) {
    fail("I5: rank " + std::to_string(me.rank) + " entered " + to_string(kind) +
         " as collective #" + std::to_string(sequence) + " of group g" + std::to_string(id_) +
         ", where rank " + std::to_string(members_[s.arrived.front()].rank) + " entered " +
         to_string(s.kind));
  }
  s.arrived.push_back(index);
  s.values.push_back(value);
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
        if (auto never = never_completes(index, sequence)) return never;
        if (std::chrono::steady_clock::now() >= deadline) {
          return std::optional<std::string>(timed_out(index, sequence));
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
  slot& s = slots_.at(sequence);
  if (s.arrived.size() == members_.size()) {
    std::int64_t combined = s.values.front();
    for (std::int64_t v : s.values) {
      combined =
          kind == collective_kind::all_reduce_min ? std::min(combined, v) : std::max(combined, v);
    }
    // The last member to arrive carries the agreed value through the device.
    combined = plane_.pass_through(combined, reduce_op_of(kind), wait_policy{deadline, {}});
    s.result = kind == collective_kind::barrier ? 0 : combined;
    s.complete = true;
    changed_.notify_all();
  }
  while (!slots_.at(sequence).complete) {
    if (failure_) throw collective_divergence(*failure_);
    if (auto never = never_completes(index, sequence)) fail(*never);
    if (std::chrono::steady_clock::now() >= deadline) fail(timed_out(index, sequence));
    changed_.wait_for(lock, look_interval);
  }
  slot& done = slots_.at(sequence);
  const std::int64_t result = done.result;
  if (++done.left == members_.size()) slots_.erase(sequence);
  return result;
}

}  // namespace kvsim::real
