// Each code probe fires on the event sequence that marks its mechanism, and stays quiet on the
// sequence that looks like it but is not (a release with nothing deferred, a tombstone from a
// re-close, a copy not yet started). The names round-trip, and a catalogue scenario may name
// only real probes.
#include "scenarios/code_probes.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/properties/event_builder.h"

namespace kvsim::scenarios::code_probes_test {
namespace {

using core::room_key;
using testing::event_builder;

constexpr core::rank_id prefill = 0;
constexpr core::rank_id decode = 1;
const room_key a{7, 0};
const room_key a_next{7, 1};

std::uint64_t hits_of(const event_builder& log, probe p) {
  return count_probes(log.events())[static_cast<std::size_t>(p)];
}

// Every probe but `p` stays at zero: the sequences are specific to their mechanism.
void expect_only(const event_builder& log, probe p, std::uint64_t hits = 1) {
  const probe_hits all = count_probes(log.events());
  for (std::size_t i = 0; i < probe_count; ++i) {
    const auto other = static_cast<probe>(i);
    EXPECT_EQ(all[i], other == p ? hits : 0u) << to_string(other);
  }
}

TEST(CodeProbes, NamesRoundTrip) {
  for (std::size_t i = 0; i < probe_count; ++i) {
    const auto p = static_cast<probe>(i);
    EXPECT_EQ(probe_from_string(to_string(p)), p);
  }
  EXPECT_FALSE(probe_from_string("deferred-release").has_value());
  EXPECT_FALSE(probe_from_string("").has_value());
}

TEST(CodeProbes, DeferredReleaseOnlyWhenSomethingWasHeldBack) {
  event_builder log;
  log.release_requested(prefill, a, {0, 1}, {});
  EXPECT_EQ(hits_of(log, probe::deferred_release), 0u);
  log.release_requested(prefill, a, {0}, {1});
  expect_only(log, probe::deferred_release);
}

TEST(CodeProbes, LedgerBackPressureAndQuarantine) {
  event_builder quarantine;
  quarantine.lease_quarantined(decode, 3, a, {4});
  EXPECT_EQ(hits_of(quarantine, probe::lease_quarantine_confirmed), 0u);
  quarantine.quarantine_confirmed(decode, 3, a, {4});
  EXPECT_EQ(hits_of(quarantine, probe::lease_quarantined), 1u);
  EXPECT_EQ(hits_of(quarantine, probe::lease_quarantine_confirmed), 1u);

  event_builder timeout;
  timeout.add(sim::transfer_timed_out{1, a, false});
  EXPECT_EQ(hits_of(timeout, probe::transport_timeout_unconfirmed), 0u);
  timeout.add(sim::transfer_timed_out{1, a, true});
  expect_only(timeout, probe::transport_timeout_unconfirmed);
}

TEST(CodeProbes, DecodeQuarantineConfirmedNeedsTheAcksAfterTheDeadline) {
  event_builder by_acks;
  by_acks.decided(decode, core::deadline_expired{a, core::deadline_action::quarantined});
  by_acks.decided(decode, core::request_pages_released{a, core::release_reason::all_acks, 1, 1});
  expect_only(by_acks, probe::decode_quarantine_confirmed);

  event_builder without_deadline;
  without_deadline.decided(decode,
                           core::request_pages_released{a, core::release_reason::all_acks, 1, 1});
  EXPECT_EQ(hits_of(without_deadline, probe::decode_quarantine_confirmed), 0u);

  event_builder released_at_deadline;  // B12: not a quarantine at all
  released_at_deadline.decided(decode, core::deadline_expired{a, core::deadline_action::released});
  released_at_deadline.decided(
      decode, core::request_pages_released{a, core::release_reason::deadline, 0, 1});
  EXPECT_EQ(hits_of(released_at_deadline, probe::decode_quarantine_confirmed), 0u);
}

TEST(CodeProbes, TombstonesLeftHitAndEvicted) {
  event_builder before_open;
  before_open.decided(prefill, core::room_closed{a, 0, true});
  before_open.decided(prefill, core::lifetime_refused{core::lifetime_error::tombstoned, a});
  before_open.decided(prefill, core::tombstone_evicted{a});
  const probe_hits all = count_probes(before_open.events());
  EXPECT_EQ(all[static_cast<std::size_t>(probe::tombstone_left)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::late_sender_refused)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::tombstone_evicted)], 1u);

  // A duplicate ABORT closing a room already opened and cleared is no tombstone "left".
  event_builder reclosed;
  reclosed.decided(prefill, core::room_opened{a});
  reclosed.decided(prefill, core::room_cleared{a});
  reclosed.decided(prefill, core::room_closed{a, 0, true});
  EXPECT_EQ(hits_of(reclosed, probe::tombstone_left), 0u);
}

TEST(CodeProbes, AbortBetweenChunksNeedsAnAdmittedChunkFirst) {
  event_builder before_any;
  before_any.decided(prefill, core::lifetime_refused{core::lifetime_error::room_closed, a});
  EXPECT_EQ(hits_of(before_any, probe::abort_between_chunks), 0u);

  event_builder between;
  between.decided(prefill, core::chunk_admitted{a, 1});
  between.decided(prefill, core::lifetime_refused{core::lifetime_error::room_closed, a});
  expect_only(between, probe::abort_between_chunks);
}

TEST(CodeProbes, AbortMidCopyOnlyWhileACopyIsHalfDone) {
  const auto submitted = [](event_builder& log) {
    log.add(sim::transfer_submitted{1, a, prefill, decode, {0, 1}, {4, 5}});
  };
  event_builder not_started;
  submitted(not_started);
  not_started.decided(decode, core::abort_armed{a, {prefill}, 1, std::nullopt});
  EXPECT_EQ(hits_of(not_started, probe::abort_mid_copy), 0u);

  event_builder half;
  submitted(half);
  half.copied(1, a, prefill, 0, decode, 4);
  half.decided(decode, core::abort_armed{a, {prefill}, 1, std::nullopt});
  half.add(sim::failure_injected{a, prefill});
  EXPECT_EQ(hits_of(half, probe::abort_mid_copy), 2u);

  event_builder finished;
  submitted(finished);
  finished.copied(1, a, prefill, 0, decode, 4);
  finished.copied(1, a, prefill, 1, decode, 5);
  finished.add(sim::transfer_ended{1, a, core::transfer_poll::succeeded});
  finished.decided(decode, core::abort_armed{a, {prefill}, 1, std::nullopt});
  EXPECT_EQ(hits_of(finished, probe::abort_mid_copy), 0u);
}

TEST(CodeProbes, TokenRefusalsAreToldApartByTheRankThatRefuses) {
  using core::token_rejection;
  const auto rejected = [](event_builder& log, core::rank_id rank, token_rejection why) {
    log.decided(rank, core::token_rejected{a_next, a, 1, why});
  };
  event_builder at_prefill;
  rejected(at_prefill, prefill, token_rejection::forged);
  rejected(at_prefill, prefill, token_rejection::stale_generation);
  rejected(at_prefill, prefill, token_rejection::future_generation);
  rejected(at_prefill, prefill, token_rejection::duplicate);
  probe_hits all = count_probes(at_prefill.events());
  EXPECT_EQ(all[static_cast<std::size_t>(probe::forged_token_refused)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::wrong_generation_token_refused)], 2u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::duplicate_abort_ignored)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::duplicate_ack_ignored)], 0u);

  // Decode issued the token: what it refuses are ACKs.
  event_builder at_decode;
  at_decode.decided(decode, core::token_issued{a, 1});
  rejected(at_decode, decode, token_rejection::duplicate);
  rejected(at_decode, decode, token_rejection::stale_generation);
  all = count_probes(at_decode.events());
  EXPECT_EQ(all[static_cast<std::size_t>(probe::duplicate_ack_ignored)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::stale_generation_ack_ignored)], 1u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::duplicate_abort_ignored)], 0u);
  EXPECT_EQ(all[static_cast<std::size_t>(probe::wrong_generation_token_refused)], 0u);
}

TEST(CodeProbes, FailedKeptStickyOnlyAgainstAFailedStatus) {
  event_builder log;
  log.decided(prefill,
              core::status_update_ignored{a, core::kv_status::success, core::kv_status::failed,
                                          core::status_ignore_reason::terminal});
  EXPECT_EQ(hits_of(log, probe::failed_kept_sticky), 0u);
  log.decided(prefill,
              core::status_update_ignored{a, core::kv_status::failed, core::kv_status::success,
                                          core::status_ignore_reason::terminal});
  expect_only(log, probe::failed_kept_sticky);
}

TEST(CodeProbes, PrefetchMechanisms) {
  event_builder revoked;
  revoked.decided(0, core::prefetch_revoked{a});
  expect_only(revoked, probe::pending_prefetch_revoked);

  // Drained, then into the barrier: the order the fix guarantees.
  event_builder drained;
  drained.decided(0, core::prefetch_drained{a, false});
  EXPECT_EQ(hits_of(drained, probe::active_prefetch_drained), 0u);
  drained.add(sim::collective_entered{0, 1, 1, sim::collective_op::barrier, 0});  // another rank
  EXPECT_EQ(hits_of(drained, probe::active_prefetch_drained), 0u);
  drained.add(sim::collective_entered{0, 1, 0, sim::collective_op::barrier, 0});
  expect_only(drained, probe::active_prefetch_drained);

  // The tail of a read cut short, freed by the I/O side after the storage call returned.
  event_builder tail;
  tail.decided(0, core::host_pages_freed{a, {1}, core::host_page_owner::io_thread});
  EXPECT_EQ(hits_of(tail, probe::io_tail_freed), 0u);
  tail.add(sim::storage_read_ended{1, 0, a, false, 1});
  tail.decided(0, core::host_pages_freed{a, {0}, core::host_page_owner::scheduler});
  EXPECT_EQ(hits_of(tail, probe::io_tail_freed), 0u);
  tail.decided(0, core::host_pages_freed{a, {1}, core::host_page_owner::io_thread});
  expect_only(tail, probe::io_tail_freed);
}

TEST(CodeProbes, CarelessCallRefusedOnlyWhenTheLedgerRefused) {
  event_builder log;
  const sim::misuse_attempted call{prefill, sim::ledger_call::allocate, a, {}, {}, 0, 0, 4};
  log.add(call);
  log.add(sim::misuse_answered{prefill, std::nullopt});  // accepted: nothing refused
  EXPECT_EQ(hits_of(log, probe::careless_call_refused), 0u);
  log.add(call);
  log.decided(prefill, core::ledger_misuse{core::ledger_error::empty_request, a, {}, {}});
  log.add(sim::misuse_answered{prefill, core::ledger_error::empty_request});
  expect_only(log, probe::careless_call_refused);
}

TEST(CodeProbes, PeerDeathAndTheDecodeQuarantineItTakes) {
  event_builder log;
  log.decided(decode, core::peer_death_handled{a, prefill, core::peer_death_action::released});
  EXPECT_EQ(hits_of(log, probe::peer_death_handled), 0u) << "B8's release is no handling";
  log.decided(decode, core::peer_death_handled{a, prefill, core::peer_death_action::quarantined});
  EXPECT_EQ(hits_of(log, probe::peer_death_handled), 1u);

  event_builder source;  // prefill's source lease: a lease quarantine, not decode's
  source.lease_started(prefill, 4, a, core::lease_role::source, {0});
  source.lease_quarantined(prefill, 4, a, {0});
  source.quarantine_confirmed(prefill, 4, a, {0});
  EXPECT_EQ(hits_of(source, probe::decode_quarantine_confirmed), 0u);

  event_builder destination;
  destination.lease_started(decode, 4, a, core::lease_role::destination, {0});
  destination.lease_quarantined(decode, 4, a, {0});
  destination.quarantine_confirmed(decode, 4, a, {0});
  EXPECT_EQ(hits_of(destination, probe::decode_quarantine_confirmed), 1u);
  EXPECT_EQ(hits_of(destination, probe::lease_quarantine_confirmed), 1u);
}

}  // namespace
}  // namespace kvsim::scenarios::code_probes_test
