#include "spec/probe_names.h"

#include <array>

namespace kvsim::scenarios {
namespace {

constexpr std::array<const char*, probe_count> probe_names{
    "deferred_release",
    "lease_quarantined",
    "lease_quarantine_confirmed",
    "transport_timeout_unconfirmed",
    "decode_quarantine_confirmed",
    "peer_death_handled",
    "careless_call_refused",
    "tombstone_left",
    "late_sender_refused",
    "tombstone_evicted",
    "tombstone_retired",
    "abort_between_chunks",
    "abort_mid_copy",
    "forged_token_refused",
    "wrong_generation_token_refused",
    "duplicate_abort_ignored",
    "duplicate_ack_ignored",
    "stale_generation_ack_ignored",
    "foreign_party_token_refused",
    "retired_token_refused",
    "unproven_message_refused",
    "stranger_message_refused",
    "unissued_ack_refused",
    "failed_kept_sticky",
    "pending_prefetch_revoked",
    "active_prefetch_drained",
    "io_tail_freed",
    "pool_exhausted_recovered",
    "rooms_open_together",
    "preemption_deferred",
    "store_job_drained",
    "store_table_full",
    "store_record_evicted",
    "failed_for_pages",
};
static_assert(static_cast<std::size_t>(probe::failed_for_pages) + 1 == probe_count,
              "probe_count and the enum disagree");

}  // namespace

const char* to_string(probe p) { return probe_names.at(static_cast<std::size_t>(p)); }

std::optional<probe> probe_from_string(std::string_view name) {
  for (std::size_t i = 0; i < probe_count; ++i) {
    if (name == probe_names[i]) return static_cast<probe>(i);
  }
  return std::nullopt;
}

}  // namespace kvsim::scenarios
