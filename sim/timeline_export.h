#pragma once
// A finished run's event log as something a person looks at: Chrome trace-event JSON that
// Perfetto (ui.perfetto.dev) and chrome://tracing open, and a text timeline. Both are pure
// functions of the log: the same run gives the same bytes. docs/timelines.md is the user's
// guide to both.
//
// The JSON is the "JSON Object Format" of the Trace Event Format document (Google, "Trace
// Event Format", the document chrome://tracing and Perfetto's JSON importer follow):
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
// What maps to what:
// - a process per rank, named "rank N" (pid N + 1: Perfetto treats pid 0 and tid 0 as the
//   kernel's swapper, so synthesized traces start at 1), a thread per actor named by its
//   structural name, e.g. "r1.decode.0" (tid = actor id + 1); what the world does on its own
//   (a message delivery) is on a "rN.world" thread of the rank it happens on;
// - the clock: "ts" is virtual time in microseconds. Many steps share one virtual
//   microsecond, so the events of a microsecond are spread over it in log (= step) order,
//   1000/n ns apart for n events (sim/timeline_clock.h): ts never goes back, and its whole
//   part is the event's virtual time. Every event carries its step, time_us and index in the
//   log in "args"; "otherData" says what the run was and how to read the axis;
// - an actor's life is a B/E slice (actor_started .. actor_finished), closed at the end of
//   the log if the run stopped first; message and collective events are short X slices that
//   flow arrows ("s" -> "f", "bp":"e") bind to: one per delivered copy of a message, and one
//   from each member's collective_entered to every other member's collective_left, so the
//   last one in shows who released whom. Every arrow ends: a message never delivered ends
//   on a "never delivered" slice after the last event, on its destination's world thread,
//   with args.never_completed; a send never delivered and an entry never left say
//   "unanswered": true in their args;
// - one async slice per request, room_key (room, generation), in a "requests" process, from
//   the first event that names it to the last (cat "request", id room * 1'000'000 + gen),
//   named "request N (room R/gen G)" with args.request N where the run's requests are known;
// - the finding's pages (sim/page_history.h) each get a track in a "pages of the finding"
//   process: a slice per owner, from allocation to free, and an instant per moment of the
//   page's history;
// - every other event is a thread instant named by its kind, with describe()'s line in
//   args.text; a finding is a global instant at the end.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/actor_name.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::scenarios {
struct scenario_spec;
}

namespace kvsim::sim {

// A request of the run's scenario, in the scenario's order (a transfer scenario's requests,
// its load's included): the text timeline names it "request N (room R/gen G)" by its index N
// and lists every one in its header.
struct timeline_request {
  core::room_key key;  // the room and its generation: earlier requests of the same room
  std::uint32_t pages = 0;
  std::optional<std::uint64_t> arrive_at_us;  // empty: at the start
  std::string abort;                          // its abort phase ("anytime"); empty: none
};

// A scenario's requests with their keys as the transfer world assigns them: in list order,
// generation = how many earlier requests use the same room. A prefetch scenario's rooms are
// not requests of a list: none.
std::vector<timeline_request> timeline_requests(const scenarios::scenario_spec& spec);

// Their keys, in order (sim/event_phrase.h's request_names is built from them).
std::vector<core::room_key> request_keys(const std::vector<timeline_request>& requests);

// What run a timeline shows, for its header: the trace file's own fields.
struct timeline_run {
  std::string scenario;
  std::string variant;
  std::string strategy;
  std::string checkers = "all";
  std::uint64_t seed = 0;
  std::string faults;  // fault_profile::describe()
  std::size_t decisions = 0;
  std::uint64_t steps = 0;  // the run's schedule steps, numbered 1..steps (0: the world's setup)
  std::vector<timeline_request> requests;  // empty: none known (a test world, a prefetch run)
};

// `found` (the run's finding, if any) becomes a global instant at the end of the timeline,
// the events it cites as evidence say so in their args, and its pages get tracks. `run`
// (when it names a scenario) goes into "otherData". Every string in the result is valid
// UTF-8 (bad bytes of free text become U+FFFD), so a plain dump() never throws.
nlohmann::json chrome_trace(const std::vector<sim_event>& events,
                            const std::vector<actor_name>& actors,
                            const std::optional<finding>& found = std::nullopt,
                            const timeline_run& run = {});

// The text timeline, lines of at most text_line_cap characters:
// - a header: the run (scenario, variant, strategy, seed, faults, decisions, steps), the
//   time unit, and the finding in one line (or "finding: none"); where the run's requests
//   are known, a legend of them, a line each: "  request 35: room 4/gen 2, 2 pages, arrives
//   t=35us, abort anytime";
// - one line per event, "step 12 t=40us r1.decode.0: sends ABORT #3 (room 42/gen 0) from
//   rank 1 to rank 0", in domain terms (sim/event_phrase.h); where the run's requests are
//   known, each line names a request by its index where it first mentions it (request_names
//   in sim/event_phrase.h): "allocates rank 1 pages [6,7] to request 35 (room 4/gen 2)",
//   "sends ABORT #3 (request 35, room 4/gen 2)"; the finding's evidence ends in
//   "[evidence]"; steps with no event (a scheduling decision only) are summarised, "steps
//   6..8: scheduling decisions only, no events", so every step 0..steps is accounted for;
// - the finding (invariant, message, details), the steps that prove it, and the history of
//   every page it involves (sim/page_history.h); or "no finding".
inline constexpr std::size_t text_line_cap = 160;

std::string text_timeline(const timeline_run& run, const std::vector<sim_event>& events,
                          const std::vector<actor_name>& actors,
                          const std::optional<finding>& found);

}  // namespace kvsim::sim
