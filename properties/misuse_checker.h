#pragma once
// The page ledger's contract against a careless caller (the fault `misuse`): a wrong call is
// refused with the right reason, names the right culprit, and changes nothing.
//
// The world brackets each careless call with misuse_attempted and misuse_answered. From the
// ledger's own history (page_ownership's replay of its events) the checker predicts what the
// ledger must answer, in the order the ledger checks (the page list first: empty, out of
// range, duplicate; then each page in turn: free, another owner's, retiring; for a lease id:
// never issued, ended, quarantined or not), and holds the call against it:
//   - the answer is the predicted refusal (an accepted misuse, or the wrong reason, is found);
//   - exactly one ledger_misuse event, naming the predicted error, caller, page and lease;
//   - no other decision of the ledger inside the bracket (a refused call changes nothing).
// One careless call is no misuse by design: release_all by a room that holds nothing must be
// accepted and change nothing (it is what a scheduler calls on a request it already cleaned).
// A misuse outside a bracket (the core itself misusing the ledger) is use_after_free's.
// Evidence: the attempt, the events inside the bracket, and the answer.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/events.h"
#include "core/ids.h"
#include "properties/dense_index_map.h"
#include "properties/page_ownership.h"
#include "properties/shared_page_ownership.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::properties {

// What the ledger must emit and return for a careless call.
struct predicted_refusal {
  core::ledger_error error = core::ledger_error::empty_request;
  core::room_key caller;  // as the ledger_misuse event names it
  std::optional<core::page_index> page;
  std::optional<core::lease_id> lease;

  friend bool operator==(const predicted_refusal&, const predicted_refusal&) = default;
};

class misuse_checker : public sim::checker {
 public:
  misuse_checker() = default;
  // Reads `shared`, which a page_ownership_feed attached after this checker feeds
  // (properties/shared_page_ownership.h).
  explicit misuse_checker(const page_ownership& shared) : ownership_(shared) {}

  const char* name() const override { return "misuse"; }
  sim::event_kinds subscriptions() const override;
  std::optional<sim::finding> observe(const sim::sim_event& e, std::size_t index) override;

  // Empty: by the history replayed so far the call is no misuse (the ledger would accept it).
  std::optional<predicted_refusal> predict(const sim::misuse_attempted& call) const;
  // Whether `caller` holds a page on `rank` that a release_all would release.
  bool holds_pages(core::rank_id rank, const core::room_key& caller) const;

 private:
  struct open_call {
    sim::misuse_attempted call;
    std::optional<predicted_refusal> expected;
    std::vector<std::size_t> evidence;       // the attempt and every ledger event inside
    std::vector<core::ledger_misuse> refusals;
    std::vector<std::string> other_decisions;  // anything else the ledger decided inside
    bool harmless = false;  // a release_all with nothing to release: accepted, no change
  };

  std::optional<predicted_refusal> predict_pages(const sim::misuse_attempted& call) const;
  std::optional<predicted_refusal> predict_lease(const sim::misuse_attempted& call) const;
  std::optional<sim::finding> close(const sim::misuse_answered& answer, std::size_t index);

  ownership_source ownership_;
  dense_index_map<core::rank_id, core::lease_id> last_lease_issued_;
  std::optional<open_call> open_;
};

}  // namespace kvsim::properties
