#pragma once
// Where each event of a run sits on an exported time axis: at its virtual time, in
// nanoseconds, with an offset inside its microsecond that orders the events of that
// microsecond by their place in the log (the log is in step order, and many steps share one
// microsecond: virtual time only moves when nobody can run).
//
// A microsecond holding n items gives each a slot of 1000/n ns (whole nanoseconds, the
// resolution Perfetto's JSON importer keeps), in log order. So a position never leaves its
// event's own virtual microsecond and never goes back. Past 1000 items in one microsecond
// slots become 0 ns wide: the order then rests on the order of the output alone.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/sim_events.h"

namespace kvsim::sim {

struct timeline_slot {
  std::uint64_t start_ns = 0;  // virtual time * 1000 + the offset within the microsecond
  std::uint64_t width_ns = 0;  // up to the next slot (or the microsecond's end)
};

struct timeline_clock {
  std::vector<timeline_slot> events;    // one per log event, same index
  std::vector<timeline_slot> trailing;  // extra slots after the last event, in its microsecond
};

// `trailing` slots are reserved after the last event (at virtual time 0 for an empty log),
// for what an export closes at the end of the run.
timeline_clock place_on_virtual_time(const std::vector<sim_event>& events, std::size_t trailing);

}  // namespace kvsim::sim
