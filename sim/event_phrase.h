#pragma once
// A run's events in a few words each, for people: what the text timeline prints after the
// step, time and actor. Domain terms throughout (DOMAIN.md): requests as "room 42/gen 0",
// pages as "rank 1 page 3", transfers by their executor "r0.transfer.1" (never the packed
// 64-bit id), messages by kind, number and request. Events without a phrase of their own
// keep describe()'s words, so nothing is lost. Where a run's scenario is known, request_names
// names its requests by their index in the scenario: "request 35 (room 4/gen 2)".
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/actor_name.h"
#include "sim/sim_events.h"

namespace kvsim::sim {

// "r1.decode.0"; "world" for the world's own events.
std::string actor_text(actor_id actor, const std::vector<actor_name>& actors);

// describe()'s line without its "step S t=Tus ACTOR " prefix: the trace file's own words.
std::string what_text(const sim_event& e, const std::vector<actor_name>& actors);

// The requests of a run by their index in its scenario's request list, for people. Built from
// their keys in list order; a key not among them (a test world's, a forged message's, a
// prefetch run's) keeps its own words.
class request_names {
 public:
  request_names() = default;
  explicit request_names(const std::vector<core::room_key>& keys);

  bool empty() const { return index_.empty(); }
  std::optional<std::size_t> index_of(const core::room_key& key) const;

  // `line` with every known "room R/gen G" named: its first mention on the line becomes
  // "request N (room R/gen G)", or "request N, room R/gen G" inside parentheses (a message's
  // "(room 4/gen 2)" reads "(request 35, room 4/gen 2)"), a possessive "request N's (...)";
  // a later mention of the same request on the line is "request N" alone.
  std::string name_in(const std::string& line) const;

 private:
  std::map<core::room_key, std::size_t> index_;
};

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
