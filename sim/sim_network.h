#pragma once
// The control-plane network: one mailbox per rank. A sent message is a pending delivery
// that the scheduler chooses when to perform, so messages reorder; the run's fault profile
// may delay (virtual time), duplicate or drop it; a dropped message is resent by the
// transport (TCP semantics: lost in flight, not lost for good) and arrives 100 us late.
// An adversary on the control plane may also replay an earlier message to the same rank
// (from an earlier generation of a reused room, say) or send a tampered copy of a message
// that carries an abort token (MAC bit flipped, generation, nonce, issuer or room changed,
// edge values 0 and max, token stripped): the verifier, tombstones and generation checks are
// attacked in every search whose scenario allows it, not only in unit tests. With a liveness
// model (peer death), a message whose sender or receiver is dead when it is sent or due is
// lost for good: the connection is gone, nobody resends it.
//
// With an insider (set_insider), the same adversary also lies as a member of the cluster: a
// rank that holds the keys of its own links to every rank (core/link_keys.h) and is party to
// no request. Along with a message it may send, all under its own keys: progress (chunk_ready,
// a failed status) for the message's request, to that request's decode rank, as itself or as
// the request's prefill rank (proven with whichever of its keys it tries: the one it
// shares with the receiver or with the rank it claims to be, never that rank's); a drain-ACK
// echoing an ABORT it saw go by, as the prefill rank the ABORT was for (proven the same way) or as itself with a token it minted on its own link; the ABORT itself, sent on
// to its audience as the insider's own; and a drain-ACK recorded in an earlier life of the
// cluster (the same link keys, the decode rank's previous epoch): genuine and proven by the
// prefill rank that sent it then, but not the token this life issued. It replays an ABORT
// recorded before the prefill rank restarted (made under the key of the link's earlier life)
// to the prefill rank's present life, for the same (room, generation). It also sends what a
// stranger holding no key could: progress in the prefill rank's name with no proof at all.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/link_keys.h"
#include "core/ports.h"
#include "sim/sim_liveness.h"
#include "sim/wait_queue.h"
#include "sim/world.h"

namespace kvsim::sim {

class sim_network {
 public:
  explicit sim_network(world& w);
  ~sim_network();

  // The messenger port of `rank` (created on first use).
  core::messenger& endpoint(core::rank_id rank);
  // Non-blocking receive for actors that poll several sources.
  std::optional<core::control_message> try_receive(core::rank_id rank);
  // Who is alive (peer death); without one, every rank is.
  void set_liveness(const sim_liveness& liveness) { liveness_ = &liveness; }
  // The key of the link between two ranks under the cluster's key (the world derives them).
  using link_lookup = std::function<const core::link_macs&(core::rank_id, core::rank_id)>;
  // The insider: `rank` is its id (a member of the cluster, party to no request); `links` the
  // world's link keys, from which it takes its own and the earlier life's recordings.
  // `before_restart(a, b)`: the key the link between `a` and `b` had while `b` was in its
  // earlier life (before it restarted), from which the insider takes that life's recordings;
  // empty where no recording of an earlier connection can arrive (a transport that seals each
  // connection): that lie then sends nothing.
  void set_insider(core::rank_id rank, link_lookup links, link_lookup before_restart) {
    insider_ = rank;
    links_ = std::move(links);
    links_before_restart_ = std::move(before_restart);
  }

 private:
  class endpoint_port;
  struct mailbox {
    std::deque<core::control_message> messages;
    std::unique_ptr<wait_queue> waiters;
  };

  void send(core::rank_id from, core::rank_id to, core::control_message message);
  void deliver(message_id id, core::rank_id to, const core::control_message& message,
               std::uint64_t delay_us);
  void attack(core::rank_id to, const core::control_message& message);
  void lie(core::rank_id to, const core::control_message& message);
  // The lies about a request's progress and the earlier life's ABORT (`how` an insider_lie of
  // sim_network.cc); false when `how` is one of the lies about an ABORT instead.
  bool lie_about_progress(std::uint32_t how, core::rank_id to, const core::control_message& message);
  // The lies about an ABORT on its way to its audience: relayed on, or answered with an ACK.
  void lie_about_abort(std::uint32_t how, core::rank_id to, const core::control_message& message);
  const core::link_macs& own_key(core::rank_id self, core::rank_id receiver, core::rank_id claimed);
  void inject(core::rank_id to, const core::control_message& message);
  core::control_message receive(core::rank_id rank);
  mailbox& box(core::rank_id rank);
  bool connected(core::rank_id from, core::rank_id to) const;

  world& world_;
  // By rank (ranks are small consecutive ids): a lookup on every send and receive is an
  // index, where a std::map walked a tree that grew with the world. Each mailbox on its own,
  // so a reference to one survives another's creation.
  std::vector<std::unique_ptr<mailbox>> mailboxes_;
  static constexpr core::rank_id mailbox_rank_limit = 1u << 16;
  std::map<core::rank_id, std::unique_ptr<endpoint_port>> ports_;
  std::map<core::rank_id, std::deque<core::control_message>> sent_to_;  // for replays
  std::map<core::rank_id, std::set<core::rank_id>> peers_of_;  // who each rank heard from
  message_id next_message_ = 1;
  const sim_liveness* liveness_ = nullptr;
  std::optional<core::rank_id> insider_;
  link_lookup links_;
  link_lookup links_before_restart_;
};

}  // namespace kvsim::sim
