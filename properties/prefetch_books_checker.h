#pragma once
// DOMAIN.md I6's protocol, the HiCache coordinator's books: each rank's prefetch decisions
// replayed into its state per request (missing, pending from prefetch_registered, active from
// prefetch_lock_taken with its host pages, missing again at prefetch_erased), and every report
// of the abort protocol held against it:
//   - a lock is taken only on a registered prefetch that holds none yet;
//   - prefetch_classified names the state the books hold; prefetch_agreed names the maximum
//     the group classified (one attention group: every rank of the world), and comes before
//     anything the rank does to the aborted prefetch (revoke, drain, free, release);
//   - a rank that classified pending revokes (prefetch_revoked) before quiescence;
//   - prefetch_drained tells the storage read's own outcome (sim::storage_read_ended);
//   - host pages are freed by the scheduler after a read that completed, by the I/O thread
//     after one that failed part-way (its unfinished tail).
// Whether an active rank drains before it frees is H2's race, left to the damage checkers
// (host_page_checker sees a read writing a freed page), not made a rule here.
// A coordinator whose reports drift from what it did gives the operator, and the group's
// reduction, a false picture: a rank that reports pending while its read runs is the H1/H2
// hazard hidden.
#include <cstddef>
#include <map>
#include <vector>
#include <string>
#include <optional>
#include <set>
#include <utility>

#include "core/events.h"
#include "core/ids.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

class prefetch_books_checker : public sim::checker {
 public:
  const char* name() const override { return "prefetch_books"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;
  std::optional<sim::finding> at_quiescence() override;

 private:
  using rank_request = std::pair<core::rank_id, core::room_key>;
  struct books {
    core::prefetch_state state = core::prefetch_state::missing;
    std::size_t since = 0;
    std::optional<core::prefetch_state> classified;  // the abort protocol, once it began
    bool agreed = false;
    std::optional<std::size_t> owes_revoke;  // classified pending, not revoked yet
    std::optional<bool> read_completed;      // the storage read's own outcome, once it ended
    std::optional<bool> drained;             // prefetch_drained's report
  };

  std::optional<sim::finding> follow(core::rank_id rank, const core::event_body& body,
                                     std::uint64_t step, std::size_t index);
  // What the books and a decision about one prefetch disagree on: the prefetch, the words, and
  // the earlier events that show it (follow adds the decision's own).
  struct disagreement {
    core::room_key key;
    std::string why;
    std::vector<std::size_t> evidence;
  };
  // A prefetch's life up to the group's agreement: registered, locked, erased, classified for
  // an abort, agreed on. `handled`: the body was one of these.
  std::optional<disagreement> follow_classification(core::rank_id rank, const core::event_body& body,
                                                    std::size_t index, bool& handled);
  // What the rank then does to it: revoke, drain, release the lock, free its host pages; each
  // only after the group agreed.
  std::optional<disagreement> follow_abort(core::rank_id rank, const core::event_body& body);

  std::map<rank_request, books> books_;
  std::map<core::room_key, core::prefetch_state> classified_max_;  // over the group
};

}  // namespace kvsim::properties
