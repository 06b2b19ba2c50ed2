#pragma once
// The trace file's format (docs/trace-format.md), once for its writers and readers: the
// simulator writes and reads traces (sim/trace.h), and the real backend writes its recordings
// in the same format (real_backend/recording_trace.h) so that `kvsim replay` and `kvsim
// export` read both. A constant spelled twice drifts; here each is spelled once.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvsim::spec {

inline constexpr std::string_view trace_format_name = "kvsim-trace";
inline constexpr int trace_format_version = 1;

// The file's top-level fields in the order they are written: the header first, so that
// `head` on a trace shows what run it is; then what replays it; then what it found.
inline constexpr std::array<std::string_view, 16> trace_fields{
    "format",   "version",   "kvsim_version", "origin", "scenario", "variant",
    "strategy", "checkers",  "seed",          "fault_profile", "decision_hash",
    "actors",   "decisions", "steps",         "events",   "finding"};

// In "fault_profile" beside the kinds; traces written before it existed lack it and load with
// faults that never stop (their runs had faults on throughout).
inline constexpr std::string_view faults_stop_field = "faults_stop_us";

// The decision hash is FNV-1a over each decision's fields: its offset basis is the hash of no
// decisions (what a recording, which makes none, carries), its prime the multiplier.
inline constexpr std::uint64_t decision_hash_basis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t decision_hash_prime = 0x100000001b3ULL;

// A 64-bit value as the trace writes hashes and digests: 16 lower-case hex digits.
std::string hex16(std::uint64_t value);

// An actor as the event log names it: "r1.decode.0" (rank, role, index within the role).
std::string actor_label(std::uint32_t rank, std::string_view role, std::uint32_t index);

// The start of every line of the event log: "step 12 t=40us r1.decode.0 " (the actor's label,
// or the world's name for itself), the event's kind and its fields after it.
std::string event_line_prefix(std::uint64_t step, std::uint64_t time_us, std::string_view actor);

// The kinds of the event log's lines, each the first word after the prefix, in the order of
// the simulator's event alternatives (sim/sim_events.h, which asserts the count); the core's
// own decisions are `core_decided`, followed by the core event (core/events.h).
enum class event_kind : std::uint8_t {
  core_decided,
  actor_started,
  actor_finished,
  collective_entered,
  collective_left,
  transfer_submitted,
  transfer_page_copied,
  transfer_ended,
  transfer_timed_out,
  page_written,
  page_read,
  storage_read_started,
  storage_page_written,
  storage_read_ended,
  message_sent,
  message_delivered,
  message_dropped,
  fault_fired,
  gate_changed,
  failure_injected,
  ledger_audited,
  core_audited,
  status_read,
  rank_stopped,
  transport_torn_down,
  message_lost,
  misuse_attempted,
  misuse_answered,
  ledger_created,
  lifetimes_created,
  lifetime_misuse_attempted,
  lifetime_misuse_answered,
  status_written,
  room_table_read,
  ignored_call_attempted,
  ignored_call_answered,
  engine_freed,
  deadlines_checked,
};

inline constexpr std::array<std::string_view, 38> event_kind_names{
    "core_decided",
    "actor_started",
    "actor_finished",
    "collective_entered",
    "collective_left",
    "transfer_submitted",
    "transfer_page_copied",
    "transfer_ended",
    "transfer_timed_out",
    "page_written",
    "page_read",
    "storage_read_started",
    "storage_page_written",
    "storage_read_ended",
    "message_sent",
    "message_delivered",
    "message_dropped",
    "fault_fired",
    "gate_changed",
    "failure_injected",
    "ledger_audited",
    "core_audited",
    "status_read",
    "rank_stopped",
    "transport_torn_down",
    "message_lost",
    "misuse_attempted",
    "misuse_answered",
    "ledger_created",
    "lifetimes_created",
    "lifetime_misuse_attempted",
    "lifetime_misuse_answered",
    "status_written",
    "room_table_read",
    "ignored_call_attempted",
    "ignored_call_answered",
    "engine_freed",
    "deadlines_checked",
};

constexpr std::string_view to_string(event_kind kind) {
  return event_kind_names[static_cast<std::size_t>(kind)];
}

}  // namespace kvsim::spec
