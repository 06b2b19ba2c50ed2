// What a world says when a run stops without quiescence: each actor's line (who waits on what),
// and the findings of a deadlock (nothing can run) and a livelock (the step limit), with the
// evidence beside them.
#include <string>
#include <vector>

#include "sim/world.h"

namespace kvsim::sim {

std::string world::actor_line(actor_id id) const {
  const actor_record& actor = *actors_[id];
  std::string line = to_string(actor.name);
  switch (actor.state) {
    case actor_state::created:
      return line + " has not started";
    case actor_state::ready:
      return line + " is ready to run";
    case actor_state::running:
      return line + " is running";
    case actor_state::blocked:
      line += " waits on " + describe(actor.waiting_on);
      if (actor.wake_at_us && actor.waiting_on.kind != wait_kind::sleep) {
        line += " (or until t=" + std::to_string(*actor.wake_at_us) + "us)";
      }
      return line;
    case actor_state::finished:
      return line + " has returned";
    case actor_state::parked:
      return line + " is ready, once its strand's running actor waits";
  }
  return line;
}

std::vector<std::string> world::stuck_evidence() const {
  std::vector<std::string> lines;
  for (const auto& explain : wait_explainers_) {
    for (std::string& line : explain()) lines.push_back(std::move(line));
  }
  if (!deliveries_.empty()) {
    std::uint64_t next_us = deliveries_.begin()->second.ready_at_us;
    for (const auto& [id, delivery] : deliveries_) next_us = std::min(next_us, delivery.ready_at_us);
    lines.push_back(std::to_string(deliveries_.size()) +
                    " deliveries pending, the next due at t=" + std::to_string(next_us) + "us");
  }
  // What the world last did by itself and what the core last decided: where a stuck run
  // stopped moving. Then the tail of the log, for the order of the last steps.
  const auto last_of = [this](auto is_kind) -> const sim_event* {
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (is_kind(it->body)) return &*it;
    }
    return nullptr;
  };
  if (const sim_event* e = last_of([](const sim_event_body& b) {
        return std::holds_alternative<message_delivered>(b);
      })) {
    lines.push_back("last delivery: " + describe(*e, names_));
  }
  if (const sim_event* e = last_of([](const sim_event_body& b) {
        return std::holds_alternative<core_decided>(b);
      })) {
    lines.push_back("last core decision: " + describe(*e, names_));
  }
  const std::size_t recent = std::min(events_.size(), stuck_recent_events);
  for (std::size_t i = events_.size() - recent; i < events_.size(); ++i) {
    lines.push_back("recent: " + describe(events_[i], names_));
  }
  for (const checker* c : checkers_) {
    for (std::string& line : c->still_open()) lines.push_back(std::move(line));
  }
  return lines;
}

void world::stop_with_deadlock() {
  finding f{"deadlock", "", {}, {}};
  std::string waiting;
  for (actor_id id = 0; id < actors_.size(); ++id) {
    const actor_record& actor = *actors_[id];
    if (actor.state == actor_state::blocked) {
      // Stuck in a collective that a peer never entered: DOMAIN.md I5 (every rank of a group
      // enters the same collectives in the same order), shown by the wait-for graph.
      if (actor.waiting_on.kind == wait_kind::collective) f.invariant = "I5";
      if (!waiting.empty()) waiting += "; ";
      waiting += actor_line(id);
    }
    if (actor.state == actor_state::blocked || actor.state == actor_state::finished) {
      f.details.push_back(actor_line(id));
    }
  }
  for (std::string& line : stuck_evidence()) f.details.push_back(std::move(line));
  f.message = (f.invariant == "I5" ? "I5: " : "") + std::string("deadlock at step ") + std::to_string(steps_) + ", t=" + std::to_string(now_us_) +
              "us: nothing can run; " + waiting;
  stop_with(std::move(f));
}

// The step limit: something kept running without the run ever ending. The finding says who
// was still live and on what each waited, what happened last and what was left unfinished.
void world::stop_with_livelock() {
  finding f{"livelock", "", {}, {}};
  std::optional<finding> judged;
  for (checker* c : checkers_) {
    if ((judged = c->at_step_limit(steps_, now_us_))) break;
  }
  std::string live;
  std::size_t returned = 0;
  for (actor_id id = 0; id < actors_.size(); ++id) {
    if (actors_[id]->state == actor_state::finished) {
      ++returned;
      continue;
    }
    if (!live.empty()) live += "; ";
    live += actor_line(id);
    f.details.push_back(actor_line(id));
  }
  if (returned > 0) f.details.push_back(std::to_string(returned) + " actors have returned");
  for (std::string& line : stuck_evidence()) f.details.push_back(std::move(line));
  f.message = "livelock: no quiescence within the step limit of " +
              std::to_string(config_.step_limit) + " steps (t=" + std::to_string(now_us_) +
              "us); " + live;
  if (judged) {
    // The checker's judgement names the finding; the livelock is how the run showed it.
    judged->details.push_back(f.message);
    for (std::string& line : f.details) judged->details.push_back(std::move(line));
    f = std::move(*judged);
  }
  stop_with(std::move(f));
}

}  // namespace kvsim::sim
