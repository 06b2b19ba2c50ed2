#pragma once
// DOMAIN.md I3: decode frees destination pages only after drain-ACKs from every expected
// rank for the current generation.
//
// From an abort_armed of request k on decode rank d (expecting ranks E) on, every page_freed
// on d whose owner is k must come after a drain_ack_counted on d for k from each rank of E.
// A counted ACK only counts when it is real: the rank it names sent a drain_ack_sent for k
// to d earlier in the log. A stale ACK of an earlier generation that decode counts for the
// current one (DOMAIN.md B11) therefore proves nothing, and a duplicate from one rank never
// stands in for another rank. The counts an event reports (received, expected) are what the
// receiver believed; the ranks are derived from the events.
//
// Also fires on a request_pages_released on d for k with reason all_acks while, by the
// events, an expected rank has not drain-ACKed, or while the release itself reports fewer
// ACKs received than expected. A second abort_armed for k on d adds its expected ranks.
//
// A rank that died never drain-ACKs. Decode may count it drained by a teardown_counted
// instead, which is real only when the transport confirmed that rank torn down before (sim
// transport_torn_down): counting a lost peer as drained on the heartbeat alone, while its
// posted writes may still land, fires like an ACK that was never sent. A release for
// acks_and_teardowns is judged like one for all_acks. And decode handles a peer's death
// (peer_death_handled) only for a rank that stopped (sim rank_stopped), once per request and
// peer: a live peer taken for dead aborts a request nobody asked to abort.
// Evidence: the arm, the release or free, and every counted ACK that did not count.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class release_after_acks_checker : public sim::checker {
 public:
  const char* name() const override { return "release_after_acks"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;
  // (sender, request, receiver): a drain_ack_sent that decode may count.
  using sent_ack = std::tuple<core::rank_id, core::room_key, core::rank_id>;

  struct counted_ack {
    event_mark at;
    bool sent = false;  // the rank had sent a drain-ACK for this request to this decode rank
                        // (a teardown: its transport had confirmed the teardown)
    bool teardown = false;  // counted as a torn-down peer, not as an ACK
  };
  struct armed_abort {
    event_mark armed;
    std::set<core::rank_id> expected;
    std::map<core::rank_id, counted_ack> counted;  // first count per rank
  };
  struct verdict {
    std::vector<core::rank_id> missing;
    std::vector<std::string> details;
    std::vector<std::size_t> evidence;
  };

  // Whether every expected rank's drain-ACK (or confirmed teardown) is in: asked at every
  // free and release, so it builds no words; judge() says which are not, for a finding.
  static bool all_counted(const armed_abort& abort);
  verdict judge(const armed_abort& abort, core::rank_id decode_rank,
                const core::room_key& key) const;
  std::optional<sim::finding> check_free(const core::page_freed& freed, core::rank_id rank,
                                         event_mark at) const;
  std::optional<sim::finding> check_release(const core::request_pages_released& released,
                                            core::rank_id rank, event_mark at) const;
  std::optional<sim::finding> check_peer_death(const core::peer_death_handled& lost,
                                               core::rank_id rank, event_mark at);

  std::map<rank_room, armed_abort> armed_;
  std::map<sent_ack, event_mark> sent_;  // first drain_ack_sent of each
  std::set<core::rank_id> torn_down_;    // ranks whose transport confirmed the teardown
  std::set<core::rank_id> stopped_;      // ranks that died (sim::rank_stopped)
  // Each (decode rank, request, lost peer) handled, and when.
  std::map<std::tuple<core::rank_id, core::room_key, core::rank_id>, event_mark> handled_;
};

}  // namespace kvsim::properties
