#pragma once
// A run's events in a few words each, for people: what the text timeline prints after the
// step, time and actor. Domain terms throughout (DOMAIN.md): requests as "room 42/gen 0",
// pages as "rank 1 page 3", transfers by their executor "r0.transfer.1" (never the packed
// 64-bit id), messages by kind, number and request. Events without a phrase of their own
// keep describe()'s words, so nothing is lost.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "sim/actor_name.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

// "r1.decode.0"; "world" for the world's own events.
std::string actor_text(actor_id actor, const std::vector<actor_name>& actors);

// describe()'s line without its "step S t=Tus ACTOR " prefix: the trace file's own words.
std::string what_text(const sim_event& e, const std::vector<actor_name>& actors);

class event_phrases {
 public:
  event_phrases(const std::vector<sim_event>& events, const std::vector<actor_name>& actors);

  // What event `index` did, without step, time or actor.
  std::string phrase(std::size_t index) const;

 private:
  std::string message_text(message_id message) const;

  const std::vector<sim_event>& events_;
  const std::vector<actor_name>& actors_;
  std::map<message_id, std::size_t> sends_;  // the first send of each message
};

}  // namespace kvsim::sim
