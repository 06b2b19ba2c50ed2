#include "real_backend/nccl/collective_books.h"

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

collective_books::collective_books(std::uint32_t group_id, std::vector<core::rank_id> members)
    : id_(group_id) {
  for (const core::rank_id rank : members) members_.push_back(member{rank, {}, 0, false});
}

std::uint32_t collective_books::index_of(core::rank_id rank) const {
  for (std::uint32_t i = 0; i < members_.size(); ++i) {
    if (members_[i].rank == rank) return i;
  }
  throw real_backend_error("rank " + std::to_string(rank) + " is not a member of group g" +
                           std::to_string(id_));
}

std::uint64_t collective_books::enter(std::uint32_t index, collective_kind kind,
                                      std::int64_t value) {
  member& m = members_.at(index);
  m.kinds.push_back(kind);
  if (kind == collective_kind::barrier) ++m.barriers;
  const std::uint64_t sequence = m.kinds.size();
  auto& values = values_[sequence];
  values.resize(members_.size());
  values[index] = value;
  return sequence;
}

void collective_books::finish(std::uint32_t index) { members_.at(index).finished = true; }

std::optional<collective_kind> collective_books::last_kind(std::uint32_t index) const {
  const member& m = members_.at(index);
  if (m.kinds.empty()) return std::nullopt;
  return m.kinds.back();
}

std::optional<std::string> collective_books::mismatch(std::uint64_t sequence) const {
  std::optional<std::uint32_t> first;
  for (std::uint32_t i = 0; i < members_.size(); ++i) {
    if (entered(i) < sequence) continue;
    if (!first) {
      first = i;
      continue;
    }
    const collective_kind where = members_[*first].kinds[sequence - 1];
    const collective_kind kind = members_[i].kinds[sequence - 1];
    if (kind == where) continue;
    return "I5: rank " + std::to_string(members_[i].rank) + " entered " + to_string(kind) +
           " as collective #" + std::to_string(sequence) + " of group g" + std::to_string(id_) +
           ", where rank " + std::to_string(members_[*first].rank) + " entered " + to_string(where);
  }
  return std::nullopt;
}

bool collective_books::complete(std::uint64_t sequence) const {
  return std::all_of(members_.begin(), members_.end(),
                     [&](const member& m) { return m.kinds.size() >= sequence; });
}

std::int64_t collective_books::combined(std::uint64_t sequence) const {
  const auto& values = values_.at(sequence);
  const bool minimum = members_.front().kinds.at(sequence - 1) == collective_kind::all_reduce_min;
  std::int64_t result = values.front().value();
  for (const std::optional<std::int64_t>& v : values) {
    result = minimum ? std::min(result, v.value()) : std::max(result, v.value());
  }
  return result;
}

std::string collective_books::what_of(std::uint32_t index, std::uint64_t sequence) const {
  return std::string(to_string(members_[index].kinds[sequence - 1])) + " (collective #" +
         std::to_string(sequence) + " of group g" + std::to_string(id_) + ")";
}

std::optional<std::string> collective_books::never_completes(std::uint32_t index,
                                                             std::uint64_t sequence) const {
  for (std::uint32_t k = 0; k < members_.size(); ++k) {
    const member& peer = members_[k];
    if (k == index || peer.kinds.size() >= sequence || !peer.finished) continue;
    const std::string returned =
        peer.kinds.empty() ? "it returned without entering any collective of the group"
                           : "it returned after collective #" + std::to_string(peer.kinds.size()) +
                                 " (" + to_string(peer.kinds.back()) + ")";
    return "I5: rank " + std::to_string(members_[index].rank) + " waits in " +
           what_of(index, sequence) + ", which rank " + std::to_string(peer.rank) +
           " never entered: " + returned;
  }
  return std::nullopt;
}

std::string collective_books::timed_out(std::uint32_t index, std::uint64_t sequence,
                                        std::chrono::milliseconds patience) const {
  std::string missing;
  for (std::uint32_t k = 0; k < members_.size(); ++k) {
    const member& peer = members_[k];
    if (k == index || peer.kinds.size() >= sequence) continue;
    if (!missing.empty()) missing += ", ";
    missing += "rank " + std::to_string(peer.rank) + " (its last: " +
               (peer.kinds.empty() ? std::string("none")
                                   : "#" + std::to_string(peer.kinds.size()) + " " +
                                         to_string(peer.kinds.back())) +
               ")";
  }
  return "I5: rank " + std::to_string(members_[index].rank) + " waited " +
         std::to_string(patience.count()) + " ms in " + what_of(index, sequence) + " without " +
         (missing.empty() ? std::string("completing it") : missing + " entering it");
}

}  // namespace kvsim::real
