#pragma once
// The fault vocabulary, declared once: every kind of fault a simulated run can inject, with
// its name in traces, its switch in a scenario's `faults`, the worlds that honour it, and one
// line on what it does. The simulator's fault profile, the trace reader and writer, the
// scenario parser, writer and generator, the real backend's recordings and SCHEMA.md's table
// read their names and rules from here (tests/scenarios/fault_vocabulary_test.cc holds each to
// it).
// Adding a kind is a row here, the code that fires it, and its test (docs/extending.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvsim::spec {

// The order is the trace's and the profile's (fault_profile::per_million is indexed by it)
// and the order in which a profile's kinds are drawn from a seed: append, never reorder.
enum class fault_kind : std::uint8_t {
  message_delay,
  message_duplicate,
  message_drop,
  transfer_stall,
  transfer_fail,
  transfer_timeout_unconfirmed,
  abort,
  message_replay,
  message_forge,
  peer_death,
  ledger_misuse,
  late_status,
};
inline constexpr std::size_t fault_kind_count = 12;

// The worlds that honour a kind (a bit each): a scenario of another world refuses it.
enum world_bits : std::uint8_t {
  transfer_world = 1u << 0,
  prefetch_world = 1u << 1,
};

struct fault_kind_row {
  fault_kind kind;
  // The key of the trace's fault_profile and of the profile printed with a seed.
  std::string_view trace_name;
  // The scenario's switch, faults.<key>; empty: not a switch (a scenario's abort is asked for
  // by its requests, and only its timing is drawn).
  std::string_view scenario_key;
  std::uint8_t worlds;
  // Traces written before the kind existed lack it, and read as off.
  bool in_first_traces;
  // A trace's fault_profile names the kind even when it is off (the kinds traces have named
  // so far). A kind added later is named only when on, so that a run without it keeps its
  // trace byte for byte (the golden digests, the corpus) and older readers are not surprised.
  bool traced_when_off;
  // The scenario writer writes the switch even when off (the kinds scenarios and traces had
  // from the start); a later kind is written only when on, so older files read as they did.
  bool written_when_off;
  // May fail a request nobody aborted: a fault of the environment, not the adversary's
  // (whose messages a correct core refuses) nor the scenario's abort.
  bool fails_requests;
  std::string_view summary;
};

// Columns: kind, trace name, scenario switch, worlds, then the flags in_first_traces,
// traced_when_off, written_when_off, fails_requests, then the summary.
inline constexpr std::array<fault_kind_row, fault_kind_count> fault_kinds{{
    {fault_kind::message_delay, "delay", "message_delay", transfer_world, true, true, true, true,
     "a control message arrives late, after later ones"},
    {fault_kind::message_duplicate, "duplicate", "message_duplicate", transfer_world,
     true, true, true, true, "a control message arrives twice"},
    {fault_kind::message_drop, "drop", "message_drop", transfer_world, true, true, true, true,
     "a control message is lost"},
    {fault_kind::transfer_stall, "stall", "transfer_stall", transfer_world | prefetch_world,
     true, true, true, true,
     "a copy step (or a storage read's page) waits: it stays in flight longer"},
    {fault_kind::transfer_fail, "fail", "transfer_fail", transfer_world | prefetch_world,
     true, true, true, true, "a transfer (or a storage read) ends Failed part-way"},
    {fault_kind::transfer_timeout_unconfirmed, "timeout_unconfirmed",
     "transfer_timeout_unconfirmed", transfer_world, true, true, true, true,
     "a poll says timed out while the copy still runs (B12)"},
    {fault_kind::abort, "abort", "", transfer_world, true, true, false, false,
     "a scenario's abort lands at this opportunity of its phase"},
    {fault_kind::message_replay, "replay", "message_replay", transfer_world,
     false, true, true, false, "an adversary replays an earlier message to the same rank"},
    {fault_kind::message_forge, "forge", "message_forge", transfer_world, false, true, true, false,
     "an adversary sends tampered copies of messages with tokens, and an insider lies"},
    {fault_kind::peer_death, "peer_death", "peer_death", transfer_world, false, true, false, true,
     "a prefill rank stops for good; its transport confirms the teardown later"},
    {fault_kind::ledger_misuse, "misuse", "ledger_misuse", transfer_world, false, true, false, true,
     "a careless caller outside the core misuses a rank's ledger and room table"},
    {fault_kind::late_status, "late_status", "late_status", transfer_world,
     false, true, false, true, "a transfer worker's status write lands late"},
}};

constexpr const fault_kind_row& row_of(fault_kind kind) {
  return fault_kinds[static_cast<std::size_t>(kind)];
}

// The rows are in the enum's order, one per kind.
constexpr bool rows_in_kind_order() {
  for (std::size_t i = 0; i < fault_kinds.size(); ++i) {
    if (static_cast<std::size_t>(fault_kinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_kind_order(), "fault_kinds: one row per kind, in the enum's order");

// A kind that traces name only when on cannot be one every trace has.
constexpr bool untraced_kinds_are_later() {
  for (const fault_kind_row& row : fault_kinds) {
    if (!row.traced_when_off && row.in_first_traces) return false;
  }
  return true;
}
static_assert(untraced_kinds_are_later(), "fault_kinds: traced_when_off false needs in_first_traces false");
static_assert(static_cast<std::size_t>(fault_kind::late_status) + 1 == fault_kind_count);

// Whether a trace's fault_profile names the kind at this level (per million): always when on,
// and when off only if traces have always named it. The simulator's traces and the real
// backend's recordings both write their profiles by this rule.
constexpr bool named_in_trace(const fault_kind_row& row, std::uint32_t per_million) {
  return per_million != 0 || row.traced_when_off;
}

// The kind's trace name.
inline const char* to_string(fault_kind kind) { return row_of(kind).trace_name.data(); }
std::optional<fault_kind> fault_kind_from_trace_name(std::string_view name);
std::optional<fault_kind> fault_kind_from_scenario_key(std::string_view key);

}  // namespace kvsim::spec
