#pragma once
// The careless caller (fault `misuse`): code outside the core that shares a rank's core
// objects and calls them wrongly, as a serving engine's glue with a bookkeeping bug would, at
// any poll the search chooses while the rank serves. On every rank it calls the page ledger
// wrongly; on a prefill rank also the room table and send_chunk, on a decode rank also the
// receiver's abort, complete and prealloc where they must be ignored, and it frees a request
// the core gave up on as an impatient engine would. Each call is wrong whatever the core
// holds (judged by the core's accessors or its own events), so the core must refuse it, name
// the culprit and change nothing; the checkers predict each answer from the core's history.
// The world (transfer_world.cc) runs the loop and decides when the fault fires.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/decode_receiver.h"
#include "core/ids.h"
#include "core/page_ledger.h"
#include "core/prefill_sender.h"
#include "core/room_lifetimes.h"
#include "sim/sim_events.h"
#include "sim/world.h"

namespace kvsim::scenarios {

class careless_caller {
 public:
  // What the caller can reach on one rank: the ledger always, the room table and the sender
  // on a prefill rank, the receiver on a decode rank.
  struct rank_targets {
    core::page_ledger& ledger;
    core::room_lifetimes* table = nullptr;
    core::prefill_sender* sender = nullptr;
    core::decode_receiver* receiver = nullptr;
  };

  // `keys`: the scenario's requests; `decode_ranks`: where a careless chunk would go. Both
  // are read at each call (the world fills them after building the caller).
  careless_caller(sim::world& world, const std::vector<core::room_key>& keys,
                  const std::vector<core::rank_id>& decode_ranks)
      : world_(world), keys_(keys), decode_ranks_(decode_ranks) {}

  // One careless call on `rank` (the fault fired): one in three goes to the room table and one
  // in three to send_chunk on a prefill rank; on a decode rank one in three to the receiver
  // and one in three frees a request the core gave up on; the rest to the ledger.
  void call_once(core::rank_id rank, const rank_targets& targets);

  // A room no request of the scenario uses, with the largest ids: it owns nothing, ever.
  static core::room_key stranger();

 private:
  using rank_id = core::rank_id;
  using room_key = core::room_key;
  using page_index = core::page_index;

  void misuse_once(rank_id rank, core::page_ledger& ledger);
  void impatient_free_once(rank_id rank, core::page_ledger& ledger,
                           const core::decode_receiver& receiver);
  void ignored_sender_call_once(rank_id rank, const core::room_lifetimes& table,
                                core::prefill_sender& sender);
  void ignored_receiver_call_once(rank_id rank, core::decode_receiver& receiver);
  void misuse_table_once(rank_id rank, core::room_lifetimes& table);
  void careless_lease_call(rank_id rank, sim::misuse_attempted& call);
  void follow_events();

  sim::world& world_;
  const std::vector<room_key>& keys_;
  const std::vector<rank_id>& decode_ranks_;
  // What the caller remembers from the core's events, as a real caller would remember the
  // lease ids it was given and the requests it saw the core give up on (follow_events).
  enum class lease_life : std::uint8_t { live, quarantined, ended };
  struct rank_leases {
    std::map<core::lease_id, lease_life> lives;
    core::lease_id last_issued = 0;
  };
  std::map<rank_id, rank_leases> leases_seen_;
  std::map<rank_id, std::set<room_key>> held_for_dead_peer_;
  std::size_t events_seen_ = 0;
};

}  // namespace kvsim::scenarios
