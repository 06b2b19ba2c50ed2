#pragma once
// core::collective for one member of a rank group whose peers are processes of their own
// (`kvsim real --ranks N` of a HiCache case, prefetch_processes.h). Every entry is told to
// every peer as a collective frame over the authenticated, sealed control plane
// (tcp_messenger.h), and every peer's entry is read from there into the group's books
// (collective_books.h), the books rank_group keeps for host threads. So a divergence is the
// finding it is in one process, in the same words (DOMAIN.md I5), found by the member that
// waits: a peer entered another collective under the same number, a peer returned (its
// finished note) without entering the one this member waits in, or the wait passed the
// group's patience (a peer that never arrives). The member that finds it tells its peers (a
// diverged note), and a peer that waits then, or enters a collective later, throws the same
// line, as the members of a rank_group do.
//
// MIN and MAX: every member combines the same values (its own and each peer's entry) into the
// same result, no member's word taken for the result. A peer whose link closes before it said
// it finished is not a finding but a failure of the run (real_backend_error: that process
// died); so is a note that breaks the protocol (an entry out of order, another group's).
//
// One thread calls it: the member's owner thread (core/owner_thread.h), which reads the wire
// while it waits in a collective; between collectives the notes wait in the messenger.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ports.h"
#include "real_backend/nccl/collective_books.h"
#include "real_backend/wire/tcp_messenger.h"

namespace kvsim::real {

class wire_group final : public core::collective {
 public:
  // `wire` is this member's messenger (its rank is the member), linked to every other member,
  // and took accept_collectives() before it linked.
  wire_group(std::uint32_t id, std::vector<core::rank_id> members, tcp_messenger& wire,
             std::chrono::milliseconds patience);

  std::uint32_t group_size() const override { return books_.size(); }
  std::uint32_t group_rank() const override { return self_; }
  std::int64_t all_reduce(std::int64_t value, core::reduce_op op) override;
  void barrier() override;

  // This member has returned: its peers learn that it enters no collective any more.
  void finished();

  std::uint32_t barrier_entries() const { return books_.barriers(self_); }
  std::uint64_t collectives_entered() const { return books_.entered(self_); }

 private:
  std::int64_t enter(collective_kind kind, std::int64_t value);
  // Applies every note that arrives within `timeout` (waiting for the first only).
  void take(std::chrono::milliseconds timeout);
  void apply(const collective_delivery& delivery);
  // A peer that closed its link without saying it finished, while this member waits in
  // `sequence`: the run failed.
  void check_links(std::uint64_t sequence) const;
  void tell_peers(const collective_note& note, bool best_effort);
  [[noreturn]] void fail(const std::string& finding, std::uint64_t sequence, collective_kind kind);

  tcp_messenger& wire_;
  std::chrono::milliseconds patience_;
  collective_books books_;
  std::uint32_t self_;
  std::optional<std::string> failure_;  // the first finding: every later wait throws it
  std::set<std::uint32_t> closed_;      // peers whose links have closed
};

}  // namespace kvsim::real
