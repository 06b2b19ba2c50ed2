#pragma once
// DOMAIN.md I4 and I9, as prefill reports them: what a prefill rank tells decode about a
// request is what the request came to there.
//
// A prefill rank's sender tells each decode rank that waits for request k how k ended there
// (SGLang's and Mooncake's prefill report the transfer's status to decode): `chunk_ready` when
// it succeeded, a `status` (Failed) otherwise. Decode believes it: on `chunk_ready` it takes
// the pages as written; on Failed it aborts and drains. The sender records each report as it
// decides it (core::outcome_reported; the message is on the wire a step later, and an ABORT
// accepted in between does not make the decision wrong). For each report from prefill rank p
// to decode rank d about k:
//   - it is the only one p sends d about k (a second is a core that lost track of what it
//     told; decode would act on both);
//   - a chunk_ready goes out only once no transfer of k from p is running (decode would read
//     pages a copy still writes). A Failed may go while a copy runs: decode then aborts and
//     waits for the drain-ACK, which I2 holds back until the copy ended;
//   - chunk_ready only when nothing failed k on p: no transfer of k from p failed or timed
//     out, no failure was injected on p, p accepted no ABORT of k (I4: a request a prefill
//     rank failed is never completed on decode);
//   - Failed only for such a cause (I9: a request fails only for a cause; decode would abort
//     a request that succeeded);
//   - the request_finished p emits for k afterwards never says succeeded after a Failed
//     report (the other way round is a race, not a lie: an ABORT accepted after chunk_ready
//     was decided fails the request here, and decode, which sent it, aborted it too);
//   - what goes on the wire is what was decided: every chunk_ready or status message p sends
//     about a request its core tracked (p opened k's room or closed it before its open) follows
//     its outcome_reported (the adversary's injected messages aside; a world whose prefill
//     reports by hand, with no sender, is not judged).
// Evidence: the report, and the event that makes it wrong (the cause, the running transfer's
// submission, the earlier report, or the request_finished).
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "properties/page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class outcome_report_checker : public sim::checker {
 public:
  const char* name() const override { return "outcome_report"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

 private:
  using rank_room = std::pair<core::rank_id, core::room_key>;
  struct report {
    event_mark at;
    bool failed = false;
  };

  std::optional<sim::finding> check_report(const core::outcome_reported& report, core::rank_id rank,
                                           event_mark at);
  std::optional<sim::finding> check_wire(const sim::message_sent& sent, event_mark at);
  std::optional<sim::finding> check_finished(const core::request_finished& finished,
                                             core::rank_id rank, event_mark at) const;
  void note_core(const core::event& e, event_mark at);

  std::set<rank_room> tracked_;                     // p's core opened or closed k's room
  std::map<rank_room, event_mark> cause_;           // first reason k failed on p
  std::map<sim::transfer_id, std::pair<rank_room, event_mark>> running_;  // by id: p, k, submit
  std::map<std::tuple<core::rank_id, core::rank_id, core::room_key>, report> reports_;
  std::map<rank_room, event_mark> failed_reported_;  // p's first Failed report about k
  // Decided and not on the wire yet: (p, d, k) -> failed.
  std::map<std::tuple<core::rank_id, core::rank_id, core::room_key>, bool> unsent_;
};

}  // namespace kvsim::properties
