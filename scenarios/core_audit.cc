#include "scenarios/core_audit.h"

#include <limits>

namespace kvsim::scenarios {

sim::ledger_audited audit_ledger(core::rank_id rank, const core::page_ledger& ledger,
                                 const std::vector<core::room_key>& owners) {
  sim::ledger_audited audit;
  audit.rank = rank;
  audit.pages_total = ledger.pages_total();
  audit.free_pages = ledger.free_count();
  audit.owned_pages = ledger.owned_count();
  audit.retiring_pages = ledger.retiring_count();
  audit.leased_pages = ledger.leased_page_count();
  audit.quarantined_pages = ledger.quarantined_page_count();
  audit.active_leases = ledger.active_lease_count();
  for (core::page_index page = 0; page < ledger.pages_total(); ++page) {
    const auto owner = ledger.owner_of(page);
    if (!owner) continue;
    audit.owned.push_back({page, *owner, ledger.lease_count(page), ledger.is_retiring(page)});
  }
  // Every owner the scenario knows, holding pages or not: an owner answered with none is
  // compared with the events too (a pages_of that forgets pages would hide otherwise).
  for (const core::room_key& owner : owners) audit.pages_of.emplace_back(owner, ledger.pages_of(owner));
  audit.inconsistencies = ledger.check_consistency();
  for (const core::page_index page : {ledger.pages_total(), std::numeric_limits<core::page_index>::max()}) {
    audit.beyond_pool.push_back(
        {page, ledger.owner_of(page), ledger.lease_count(page), ledger.is_retiring(page)});
  }
  return audit;
}

}  // namespace kvsim::scenarios

namespace kvsim::scenarios {

std::vector<sim::core_audited> audit_prefill(core::rank_id rank, const core::prefill_sender& sender,
                                             const core::room_lifetimes& lifetimes,
                                             const core::transfer_status_table& statuses,
                                             const core::abort_token_verifier& verifier,
                                             const std::vector<core::room_key>& keys) {
  sim::core_audited by_sender{rank, "prefill_sender", {}};
  sim::core_audited by_lifetimes{rank, "room_lifetimes", {}};
  sim::core_audited by_statuses{rank, "transfer_status_table", {}};
  for (const core::room_key& key : keys) {
    const std::string room = core::to_string(key);
    if (sender.in_flight(key)) by_sender.held.push_back(room + ": a chunk still in flight");
    if (sender.tracking(key)) by_sender.held.push_back(room + ": still tracked (never forgotten)");
    if (lifetimes.is_admitting(key)) by_lifetimes.held.push_back(room + ": still admitting chunks");
    if (const std::uint32_t leases = lifetimes.pending_leases(key); leases > 0) {
      by_lifetimes.held.push_back(room + ": " + std::to_string(leases) + " chunk lease(s) pending");
    }
    if (const auto status = statuses.get(key)) {
      by_statuses.held.push_back(room + ": status " + core::to_string(*status) + " kept");
    }
  }
  // Only once the sender tracks no room: a room still tracked may still hold its ABORTs. A
  // request aborted before it reached this rank keeps its ABORTs as long as its before-open
  // tombstone (its open may still come); every other memory of an ABORT is a leak.
  std::uint32_t awaiting_open = 0;
  for (const core::room_key& key : keys) {
    if (lifetimes.is_tombstoned_before_open(key)) awaiting_open += verifier.remembered(key);
  }
  if (by_sender.held.empty() && verifier.remembered() > awaiting_open) {
    by_sender.held.push_back(std::to_string(verifier.remembered() - awaiting_open) +
                             " ABORT token(s) still remembered by the verifier");
  }
  return {by_sender, by_lifetimes, by_statuses};
}

sim::core_audited audit_decode(core::rank_id rank, const core::decode_receiver& receiver,
                               const core::abort_token_verifier& verifier,
                               const std::vector<core::room_key>& keys) {
  sim::core_audited audit{rank, "decode_receiver", {}};
  for (const core::room_key& key : keys) {
    if (receiver.finished(key)) continue;
    const char* state = receiver.quarantined(key) ? "quarantined"
                        : receiver.aborting(key)  ? "aborting"
                                                  : "transferring";
    audit.held.push_back(core::to_string(key) + ": never finished (" + state + ")");
  }
  // Books that disagree are a leak whatever is still running: an index entry or a deadline
  // for a request that is over is never erased, and a live request among the finished ones
  // is never forgotten.
  for (const std::string& problem : receiver.check_consistency()) {
    audit.held.push_back("books disagree: " + problem);
  }
  // Only once every request finished: an unfinished one may still hold its tokens.
  if (audit.held.empty() && verifier.remembered() > 0) {
    audit.held.push_back(std::to_string(verifier.remembered()) +
                         " drain-ACK token(s) still remembered by the verifier");
  }
  return audit;
}

}  // namespace kvsim::scenarios
