#include "core/events.h"

#include <sstream>
#include <type_traits>

namespace kvsim::core {
namespace {

static_assert(std::is_same_v<rank_id, page_index>, "rank lists reuse pages_text");

std::string status_text(const std::optional<kv_status>& status) {
  return status ? to_string(*status) : "absent";
}

struct describer {
  std::ostringstream& out;

  void operator()(const pages_allocated& e) const {
    out << "pages_allocated " << to_string(e.owner) << " " << pages_text(e.pages);
    if (e.exact) out << " exact";  // only then: every trace written before reads the same
  }
  void operator()(const allocation_refused& e) const {
    out << "allocation_refused " << to_string(e.owner) << " wanted=" << e.pages_wanted
        << " free=" << e.pages_free;
  }
  void operator()(const lease_started& e) const {
    out << "lease_started lease=" << e.lease << " " << to_string(e.owner) << " "
        << to_string(e.role) << " " << pages_text(e.pages);
  }
  void operator()(const lease_ended& e) const {
    out << "lease_ended lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const lease_quarantined& e) const {
    out << "lease_quarantined lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const quarantine_confirmed& e) const {
    out << "quarantine_confirmed lease=" << e.lease << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
  }
  void operator()(const release_requested& e) const {
    out << "release_requested " << to_string(e.owner) << " freed=" << pages_text(e.freed_now)
        << " deferred=" << pages_text(e.deferred);
  }
  void operator()(const page_freed& e) const {
    out << "page_freed " << to_string(e.owner) << " page=" << e.page;
  }
  void operator()(const ledger_misuse& e) const {
    out << "ledger_misuse " << to_string(e.error) << " caller=" << to_string(e.caller);
    if (e.page) out << " page=" << *e.page;
    if (e.lease) out << " lease=" << *e.lease;
  }
  void operator()(const room_opened& e) const { out << "room_opened " << to_string(e.key); }
  void operator()(const room_closed& e) const {
    out << "room_closed " << to_string(e.key) << " pending=" << e.pending_leases
        << (!e.tombstone                                    ? ""
            : e.table == tombstone_table::before_open ? " tombstone"
                                                            : " tombstone=finished");
  }
  void operator()(const chunk_admitted& e) const {
    out << "chunk_admitted " << to_string(e.key) << " pending=" << e.pending_leases;
  }
  void operator()(const chunk_released& e) const {
    out << "chunk_released " << to_string(e.key) << " pending=" << e.pending_leases;
  }
  void operator()(const room_cleared& e) const { out << "room_cleared " << to_string(e.key); }
  void operator()(const tombstone_evicted& e) const {
    out << "tombstone_evicted " << to_string(e.key) << " table="
        << (e.table == tombstone_table::before_open ? "before_open" : "finished");
  }
  void operator()(const tombstone_retired& e) const {
    out << "tombstone_retired " << to_string(e.key) << " opened=" << e.opened;
  }
  void operator()(const lifetime_refused& e) const {
    out << "lifetime_refused " << to_string(e.error) << " " << to_string(e.key);
  }
  void operator()(const status_changed& e) const {
    out << "status_changed " << to_string(e.key) << " " << status_text(e.from) << "->"
        << to_string(e.to);
  }
  void operator()(const status_forgotten& e) const {
    out << "status_forgotten " << to_string(e.key);
  }
  void operator()(const status_update_ignored& e) const {
    out << "status_update_ignored " << to_string(e.key) << " current=" << status_text(e.current)
        << " attempted=" << to_string(e.attempted) << " reason=" << to_string(e.reason);
  }
  void operator()(const token_issued& e) const {
    out << "token_issued " << to_string(e.key) << " nonce=" << e.nonce << " audience=" << e.audience;
  }
  void operator()(const token_accepted& e) const {
    out << "token_accepted " << to_string(e.key) << " nonce=" << e.nonce << " issuer=" << e.issuer
        << " presenter=" << e.presenter << " audience=" << e.audience;
  }
  void operator()(const token_rejected& e) const {
    out << "token_rejected " << to_string(e.reason) << " expected=" << to_string(e.expected)
        << " claimed=" << to_string(e.claimed) << " nonce=" << e.nonce;
  }
  void operator()(const abort_armed& e) const {
    out << "abort_armed " << to_string(e.key) << " nonce=" << e.nonce << " expecting ranks "
        << pages_text(e.expected_ranks);  // ranks print as the same "[0,1]" list
    if (e.deadline_us) out << " deadline=" << *e.deadline_us << "us";
  }
  void operator()(const ack_target_registered& e) const {
    out << "ack_target_registered " << to_string(e.key) << " decode_rank=" << e.decode_rank
        << " nonce=" << e.nonce;
  }
  void operator()(const drain_ack_sent& e) const {
    out << "drain_ack_sent " << to_string(e.key) << " to=" << e.to << " nonce=" << e.nonce
        << (e.room_closed ? " closed" : " open") << " in_flight=" << e.in_flight;
  }
  void operator()(const drain_ack_counted& e) const {
    out << "drain_ack_counted " << to_string(e.key) << " from=" << e.from << " " << e.received
        << "/" << e.expected;
  }
  void operator()(const request_pages_released& e) const {
    out << "request_pages_released " << to_string(e.key) << " reason=" << to_string(e.reason)
        << " acks=" << e.acks_received << "/" << e.acks_expected;
  }
  void operator()(const deadline_expired& e) const {
    out << "deadline_expired " << to_string(e.key) << " action=" << to_string(e.action);
  }
  void operator()(const early_messages_dropped& e) const {
    out << "early_messages_dropped " << to_string(e.key) << " messages=" << e.messages;
  }
  void operator()(const request_finished& e) const {
    out << "request_finished " << to_string(e.key) << " outcome=" << to_string(e.outcome);
  }
  void operator()(const prefetch_registered& e) const {
    out << "prefetch_registered " << to_string(e.key);
  }
  void operator()(const prefetch_erased& e) const {
    out << "prefetch_erased " << to_string(e.key);
  }
  void operator()(const prefetch_classified& e) const {
    out << "prefetch_classified " << to_string(e.key) << " local=" << to_string(e.local);
  }
  void operator()(const prefetch_agreed& e) const {
    out << "prefetch_agreed " << to_string(e.key) << " group_max=" << to_string(e.group_max);
  }
  void operator()(const prefetch_revoked& e) const {
    out << "prefetch_revoked " << to_string(e.key);
  }
  void operator()(const host_pages_allocated& e) const {
    out << "host_pages_allocated " << to_string(e.key) << " " << pages_text(e.pages);
  }
  void operator()(const host_pages_freed& e) const {
    out << "host_pages_freed " << to_string(e.key) << " " << pages_text(e.pages)
        << " by=" << to_string(e.by);
  }
  void operator()(const prefetch_lock_taken& e) const {
    out << "prefetch_lock_taken " << to_string(e.key);
  }
  void operator()(const prefetch_lock_released& e) const {
    out << "prefetch_lock_released " << to_string(e.key);
  }
  void operator()(const prefetch_drained& e) const {
    out << "prefetch_drained " << to_string(e.key)
        << (e.read_completed ? " read=completed" : " read=failed");
  }
  void operator()(const peer_death_handled& e) const {
    out << "peer_death_handled " << to_string(e.key) << " peer=" << e.peer
        << " action=" << to_string(e.action);
  }
  void operator()(const teardown_counted& e) const {
    out << "teardown_counted " << to_string(e.key) << " peer=" << e.peer << " " << e.settled
        << "/" << e.expected;
  }
  void operator()(const transfer_unconfirmed& e) const {
    out << "transfer_unconfirmed " << to_string(e.key) << " lease=" << e.lease;
  }
  void operator()(const outcome_reported& e) const {
    out << "outcome_reported " << to_string(e.key) << " to=" << e.to
        << (e.failed ? " failed" : " chunk_ready");
  }
  void operator()(const request_running& e) const {
    out << "request_running " << to_string(e.key) << " " << pages_text(e.pages);
    if (e.resumed) out << " resumed";
  }
  void operator()(const store_job_started& e) const {
    out << "store_job_started job=" << e.job << " " << to_string(e.owner) << " "
        << pages_text(e.pages);
    if (e.lease) {
      out << " lease=" << *e.lease;
    } else {
      out << " unleased";
    }
  }
  void operator()(const store_job_refused& e) const {
    out << "store_job_refused " << to_string(e.owner) << " in_flight=" << e.in_flight;
  }
  void operator()(const store_job_done& e) const {
    out << "store_job_done job=" << e.job << " " << to_string(e.owner)
        << (e.stored ? " stored" : " failed");
    if (e.ended) out << " ended_lease=" << *e.ended;
  }
  void operator()(const store_completion_ignored& e) const {
    out << "store_completion_ignored job=" << e.job << " " << to_string(e.owner)
        << " reason=" << to_string(e.reason);
  }
  void operator()(const store_completion_forgotten& e) const {
    out << "store_completion_forgotten job=" << e.job;
  }
  void operator()(const store_job_abandoned& e) const {
    out << "store_job_abandoned job=" << e.job << " " << to_string(e.owner);
  }
  void operator()(const running_request_ended& e) const {
    out << "running_request_ended " << to_string(e.key) << " how=" << to_string(e.how)
        << " pages=" << e.page_count << " deferred=" << e.deferred;
  }
  void operator()(const running_call_refused& e) const {
    out << "running_call_refused " << to_string(e.key) << " reason=" << to_string(e.reason);
  }
};

}  // namespace

const char* to_string(release_reason reason) {
  switch (reason) {
    case release_reason::completed:
      return "completed";
    case release_reason::at_abort:
      return "at_abort";
    case release_reason::all_acks:
      return "all_acks";
    case release_reason::deadline:
      return "deadline";
    case release_reason::local_failure:
      return "local_failure";
    case release_reason::acks_and_teardowns:
      return "acks_and_teardowns";
  }
  return "unknown";
}

const char* to_string(deadline_action action) {
  switch (action) {
    case deadline_action::quarantined:
      return "quarantined";
    case deadline_action::failed_closed:
      return "failed_closed";
    case deadline_action::released:
      return "released";
  }
  return "unknown";
}

const char* to_string(request_outcome outcome) {
  switch (outcome) {
    case request_outcome::succeeded:
      return "succeeded";
    case request_outcome::aborted:
      return "aborted";
    case request_outcome::failed:
      return "failed";
    case request_outcome::preempted:
      return "preempted";
  }
  return "unknown";
}

const char* to_string(prefetch_state state) {
  switch (state) {
    case prefetch_state::missing:
      return "missing";
    case prefetch_state::pending:
      return "pending";
    case prefetch_state::active:
      return "active";
  }
  return "unknown";
}

const char* to_string(host_page_owner owner) {
  switch (owner) {
    case host_page_owner::scheduler:
      return "scheduler";
    case host_page_owner::io_thread:
      return "io_thread";
  }
  return "unknown";
}

const char* to_string(peer_death_action action) {
  switch (action) {
    case peer_death_action::quarantined:
      return "quarantined";
    case peer_death_action::already_torn_down:
      return "already_torn_down";
    case peer_death_action::released:
      return "released";
  }
  return "unknown";
}

const char* to_string(store_ignore_reason reason) {
  switch (reason) {
    case store_ignore_reason::already_counted:
      return "already_counted";
    case store_ignore_reason::not_in_flight:
      return "not_in_flight";
    case store_ignore_reason::owner_mismatch:
      return "owner_mismatch";
  }
  return "unknown";
}

const char* to_string(running_end how) {
  switch (how) {
    case running_end::finished:
      return "finished";
    case running_end::preempted:
      return "preempted";
  }
  return "unknown";
}

const char* to_string(running_refusal reason) {
  switch (reason) {
    case running_refusal::already_running:
      return "already_running";
    case running_refusal::not_running:
      return "not_running";
    case running_refusal::pages_not_owned:
      return "pages_not_owned";
    case running_refusal::no_store_engine:
      return "no_store_engine";
  }
  return "unknown";
}

const char* to_string(status_ignore_reason reason) {
  switch (reason) {
    case status_ignore_reason::failed_for_absent_room:
      return "failed_for_absent_room";
    case status_ignore_reason::regression:
      return "regression";
    case status_ignore_reason::terminal:
      return "terminal";
    case status_ignore_reason::unchanged:
      return "unchanged";
  }
  return "unknown_reason";
}

std::string describe(const event& e) {
  std::ostringstream out;
  out << "rank " << e.rank << " ";
  std::visit(describer{out}, e.body);
  return out.str();
}

}  // namespace kvsim::core
