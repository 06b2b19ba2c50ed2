#include "scenarios/code_probes.h"

#include <algorithm>
#include <variant>

namespace kvsim::scenarios {
namespace {

template <typename... Fs>
struct overloaded : Fs... {
  using Fs::operator()...;
};
// C++20 deduces this for an aggregate, but clang before 17 does not (the fuzz build's clang).
template <typename... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

}  // namespace

bool probe_counter::copy_half_done(const core::room_key& key) const {
  return std::any_of(copies_.begin(), copies_.end(), [&](const auto& entry) {
    const copy_progress& c = entry.second;
    return c.owner == key && c.copied > 0 && c.copied < c.pages;
  });
}

void probe_counter::observe(const sim::sim_event& e) {
  std::visit(
      overloaded{
          [&](const sim::core_decided& d) { observe_core(d.what); },
          [&](const sim::transfer_submitted& t) {
            copies_[t.transfer] = copy_progress{t.owner, t.destination_pages.size(), 0};
          },
          [&](const sim::transfer_page_copied& t) {
            const auto it = copies_.find(t.transfer);
            if (it != copies_.end()) ++it->second.copied;
          },
          [&](const sim::transfer_ended& t) { copies_.erase(t.transfer); },
          [&](const sim::transfer_timed_out& t) {
            if (t.still_running) hit(probe::transport_timeout_unconfirmed);
          },
          [&](const sim::failure_injected& f) {
            if (copy_half_done(f.key)) hit(probe::abort_mid_copy);
          },
          [&](const sim::collective_entered& c) {
            // The rank drained its active read, then entered the barrier its peers wait in.
            if (c.op == sim::collective_op::barrier && drained_before_barrier_.erase(c.rank) != 0) {
              hit(probe::active_prefetch_drained);
            }
          },
          [&](const sim::misuse_answered& a) {
            if (a.error) hit(probe::careless_call_refused);
          },
          [&](const sim::lifetime_misuse_answered& a) {
            if (a.error) hit(probe::careless_call_refused);
          },
          [&](const sim::ignored_call_answered& a) {
            if (!a.accepted) hit(probe::careless_call_refused);
          },
          [&](const sim::storage_read_ended& r) {
            if (!r.completed) reads_cut_short_.insert({r.rank, r.owner});
          },
          [](const auto&) {},
      },
      e.body);
}

// A refusal of authority, by its reason; a rank that issued tokens is a decode rank.
void probe_counter::token_refused(core::rank_id rank, const core::token_rejected& t) {
  const bool at_decode = token_issuers_.contains(rank);
  switch (t.reason) {
    case core::token_rejection::forged:
      hit(probe::forged_token_refused);
      break;
    case core::token_rejection::stale_generation:
      hit(at_decode ? probe::stale_generation_ack_ignored : probe::wrong_generation_token_refused);
      break;
    case core::token_rejection::future_generation:
      if (!at_decode) hit(probe::wrong_generation_token_refused);
      break;
    case core::token_rejection::duplicate:
      hit(at_decode ? probe::duplicate_ack_ignored : probe::duplicate_abort_ignored);
      break;
    case core::token_rejection::foreign_issuer:
      hit(probe::foreign_party_token_refused);
      break;
    case core::token_rejection::retired:
      hit(probe::retired_token_refused);
      break;
    case core::token_rejection::unproven:
      hit(probe::unproven_message_refused);
      break;
    case core::token_rejection::not_a_party:
      hit(probe::stranger_message_refused);
      break;
    case core::token_rejection::not_issued:
      hit(probe::unissued_ack_refused);
      break;
    case core::token_rejection::foreign_room:
      break;
  }
}

// A rank serving many requests at once: rooms open side by side, and pools run short.
void probe_counter::observe_batching(const core::event& e) {
  const core::rank_id rank = e.rank;
  std::visit(
      overloaded{
          [&](const core::room_opened& o) {
            std::set<core::room_key>& open = rooms_open_[rank];
            if (!open.empty()) hit(probe::rooms_open_together);
            open.insert(o.key);
          },
          [&](const core::request_finished& f) {
            if (const auto it = rooms_open_.find(rank); it != rooms_open_.end()) it->second.erase(f.key);
            const bool refused = refused_pages_.erase({rank, f.key}) != 0;
            if (refused && f.outcome == core::request_outcome::failed) hit(probe::failed_for_pages);
          },
          [&](const core::allocation_refused& r) { refused_pages_.insert({rank, r.owner}); },
          [&](const core::running_request_ended& r) {
            if (r.deferred == 0) return;
            stored_after_end_.insert({rank, r.key});
            if (r.how == core::running_end::preempted) hit(probe::preemption_deferred);
          },
          [&](const core::store_job_done& d) {
            if (stored_after_end_.erase({rank, d.owner}) != 0) hit(probe::store_job_drained);
          },
          [&](const core::store_job_refused&) { hit(probe::store_table_full); },
          [&](const core::store_completion_forgotten&) { hit(probe::store_record_evicted); },
          [&](const core::pages_allocated& a) {
            if (refused_pages_.erase({rank, a.owner}) != 0) hit(probe::pool_exhausted_recovered);
          },
          [](const auto&) {},
      },
      e.body);
}

void probe_counter::observe_core(const core::event& e) {
  observe_batching(e);
  const core::rank_id rank = e.rank;
  std::visit(
      overloaded{
          [&](const core::release_requested& r) {
            if (!r.deferred.empty()) hit(probe::deferred_release);
          },
          [&](const core::lease_started& l) { lease_roles_[{rank, l.lease}] = l.role; },
          [&](const core::lease_quarantined&) { hit(probe::lease_quarantined); },
          [&](const core::quarantine_confirmed& q) {
            hit(probe::lease_quarantine_confirmed);
            // A destination lease is decode's: its pages waited for the transport's word.
            const auto role = lease_roles_.find({rank, q.lease});
            if (role != lease_roles_.end() && role->second == core::lease_role::destination) {
              hit(probe::decode_quarantine_confirmed);
            }
          },
          [&](const core::deadline_expired& d) {
            if (d.action == core::deadline_action::quarantined) {
              deadline_quarantined_.insert({rank, d.key});
            }
          },
          [&](const core::request_pages_released& r) {
            if (deadline_quarantined_.erase({rank, r.key}) != 0 &&
                r.reason == core::release_reason::all_acks) {
              hit(probe::decode_quarantine_confirmed);
            }
          },
          [&](const core::peer_death_handled& p) {
            if (p.action != core::peer_death_action::released) hit(probe::peer_death_handled);
          },
          [&](const core::room_opened& o) { rooms_opened_.insert({rank, o.key}); },
          [&](const core::room_closed& c) {
            // A tombstone for a room this rank never opened (not the close of one cleared).
            if (c.tombstone && c.table == core::tombstone_table::before_open &&
                !rooms_opened_.contains({rank, c.key})) {
              hit(probe::tombstone_left);
            }
          },
          [&](const core::tombstone_evicted&) { hit(probe::tombstone_evicted); },
          [&](const core::tombstone_retired&) { hit(probe::tombstone_retired); },
          [&](const core::chunk_admitted& c) { chunks_admitted_.insert({rank, c.key}); },
          [&](const core::lifetime_refused& r) {
            if (r.error == core::lifetime_error::tombstoned) hit(probe::late_sender_refused);
            if (r.error == core::lifetime_error::room_closed &&
                chunks_admitted_.contains({rank, r.key})) {
              hit(probe::abort_between_chunks);
            }
          },
          [&](const core::token_issued&) { token_issuers_.insert(rank); },
          [&](const core::abort_armed& a) {
            token_issuers_.insert(rank);
            if (copy_half_done(a.key)) hit(probe::abort_mid_copy);
          },
          [&](const core::token_rejected& t) { token_refused(rank, t); },
          [&](const core::status_update_ignored& s) {
            if (s.current == core::kv_status::failed) hit(probe::failed_kept_sticky);
          },
          [&](const core::prefetch_revoked&) { hit(probe::pending_prefetch_revoked); },
          [&](const core::prefetch_drained&) { drained_before_barrier_.insert(rank); },
          [&](const core::host_pages_freed& f) {
            // The tail of a read cut short, freed once the storage call returned.
            if (f.by == core::host_page_owner::io_thread && reads_cut_short_.contains({rank, f.key})) {
              hit(probe::io_tail_freed);
            }
          },
          [](const auto&) {},
      },
      e.body);
}

probe_hits count_probes(const std::vector<sim::sim_event>& events) {
  probe_counter counter;
  for (const sim::sim_event& e : events) counter.observe(e);
  return counter.hits();
}

}  // namespace kvsim::scenarios
