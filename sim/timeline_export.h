#pragma once
// A finished run's event log as something a person looks at: Chrome trace-event JSON that
// Perfetto (ui.perfetto.dev) and chrome://tracing open, and a text log with one line per
// schedule step. Both are pure functions of the log: the same run gives the same bytes.
//
// The JSON is the "JSON Object Format" of the Trace Event Format document (Google, "Trace
// Event Format", the document chrome://tracing and Perfetto's JSON importer follow):
//   {"traceEvents": [...], "displayTimeUnit": "ms"}
// What maps to what:
// - a process per rank, named "rank N" (pid N + 1: Perfetto treats pid 0 and tid 0 as the
//   kernel's swapper, so synthesized traces start at 1), a thread per actor named by its
//   structural name, e.g. "r1.decode.0" (tid = actor id + 1); what the world does on its own
//   (a message delivery) is on a "rN.world" thread of the rank it happens on;
// - the clock: virtual time is coarse (many steps share one microsecond), so "ts" is a
//   synthetic, strictly increasing position: schedule step * 1000 + 10 * (the event's place
//   within its step), so one step is one millisecond on the time axis. Every event carries
//   its real step, virtual time_us and index in the log in "args";
// - an actor's life is a B/E slice (actor_started .. actor_finished), closed at the end of
//   the log if the run stopped first; message and collective events are short X slices that
//   flow arrows ("s" -> "f", "bp":"e") bind to: one per delivered copy of a message (one never
//   delivered has a start and no end), and one from each member's collective_entered to every
//   other member's collective_left, so the last one in shows who released whom; a send
//   never delivered and an entry never left say "unanswered": true in their args;
// - one async slice per request, room_key (room, generation), in a "requests" process, from
//   the first event that names it to the last (cat "request", id room * 1'000'000 + gen);
// - every other event is a thread instant named by its kind, with describe()'s line in
//   args.text; a finding is a global instant at the end.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/actor_name.h"
#include "sim/checker.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

// `found` (the run's finding, if any) becomes a global instant at the end of the timeline,
// and the events it cites as evidence say so in their args. Every string in the result is
// valid UTF-8 (bad bytes of free text become U+FFFD), so a plain dump() never throws.
nlohmann::json chrome_trace(const std::vector<sim_event>& events,
                            const std::vector<actor_name>& actors,
                            const std::optional<finding>& found = std::nullopt);

// One line per schedule step that has events, in order:
//   "step 12 t=40us r1.decode.0: message_sent message=3 ...; page_read rank=1 ..."
// An event of that step by another actor (the teardown unwinds many in one step) names it.
std::string text_log(const std::vector<sim_event>& events, const std::vector<actor_name>& actors);

}  // namespace kvsim::sim
