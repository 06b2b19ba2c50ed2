#include "spec/trace_format.h"
#include "sim/timeline_export.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

#include "sim/event_phrase.h"
#include "sim/page_history.h"
#include "sim/timeline_clock.h"
#include "spec/scenario_spec.h"

namespace kvsim::sim {
namespace {

using nlohmann::json;

// Within an event's slot on virtual time (sim/timeline_clock.h), in fifths of its width: an
// X slice covers the first two fifths and its flow points sit one fifth in, inside it, so
// that Perfetto binds the arrow to that slice and not to the actor's life around it; a
// request's async end sits after the slot's slice and before the next slot.
std::uint64_t slice_ns(const timeline_slot& slot) { return slot.width_ns * 2 / 5; }
std::uint64_t flow_ns(const timeline_slot& slot) { return slot.start_ns + slot.width_ns / 5; }
std::uint64_t async_end_ns(const timeline_slot& slot) {
  return slot.start_ns + slot.width_ns * 3 / 5;
}

// The format's "ts" and "dur" are microseconds: whole ones print as integers, the rest with
// their nanoseconds as decimals ("5.041").
json micros(std::uint64_t ns) {
  if (ns % 1000 == 0) return ns / 1000;
  return static_cast<double>(ns) / 1000.0;
}
// A request's async id reads as its key in decimal: room 42/gen 1 is 42000001.
constexpr std::uint64_t request_id_scale = 1'000'000;

template <class T, class... Ts>
constexpr bool is_one_of = (std::is_same_v<T, Ts> || ...);

// The n-th space-separated word of `text` (empty when there are fewer).
std::string word(std::string_view text, std::size_t n) {
  std::size_t start = 0;
  for (std::size_t i = 0;; ++i) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (i == n) return std::string(text.substr(start, end - start));
    if (end == text.size()) return {};
    start = end + 1;
  }
}

// The value after "key=" in a describe() text, up to the next space.
std::string field(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(" " + std::string(key) + "=");
  if (at == std::string_view::npos) return {};
  return word(text.substr(at + key.size() + 2), 0);
}

// An event's kind as describe() names it ("page_read"; for the core's own decisions the kind
// after "core_decided rank N", e.g. "lease_started"), so names never drift from the log.
std::string kind_of(std::string_view what) {
  const std::string first = word(what, 0);
  return first == spec::to_string(spec::event_kind::core_decided) ? word(what, 3) : first;
}

// Free text (a fault description, a finding) may hold bytes that are not UTF-8, which
// nlohmann's dump() refuses; they become U+FFFD here so that any caller can dump.
std::string valid_utf8(std::string text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return text;
  }
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

// The request a core decision is about.
std::optional<core::room_key> request_of_core(const core::event_body& body) {
  return std::visit(
      [](const auto& e) -> std::optional<core::room_key> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core::ledger_misuse>) {
          if (e.lease && e.caller == core::room_key{}) return std::nullopt;  // a lease only
          return e.caller;
        } else if constexpr (std::is_same_v<T, core::token_rejected>) {
          return e.expected;  // what the token claims may be a forger's lie
        } else if constexpr (requires { e.key; }) {
          return e.key;
        } else if constexpr (requires { e.owner; }) {
          return e.owner;
        } else {
          return std::nullopt;
        }
      },
      body);
}

std::optional<core::room_key> request_of(const sim_event_body& body) {
  return std::visit(
      [](const auto& e) -> std::optional<core::room_key> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core_decided>) {
          return request_of_core(e.what.body);
        } else if constexpr (std::is_same_v<T, page_written>) {
          return e.writer;
        } else if constexpr (std::is_same_v<T, page_read>) {
          return e.reader;
        } else if constexpr (requires { e.owner; }) {
          return e.owner;
        } else if constexpr (requires { e.key; }) {
          return e.key;
        } else {
          return std::nullopt;
        }
      },
      body);
}

// The rank an event happens on, when the event says (the world's own events have no actor).
std::optional<core::rank_id> rank_of(const sim_event_body& body) {
  return std::visit(
      [](const auto& e) -> std::optional<core::rank_id> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core_decided>) {
          return e.what.rank;
        } else if constexpr (std::is_same_v<T, message_sent>) {
          return e.from;
        } else if constexpr (std::is_same_v<T, message_delivered>) {
          return e.to;
        } else if constexpr (is_one_of<T, transfer_submitted, transfer_page_copied>) {
          return e.source_rank;
        } else if constexpr (requires { e.rank; }) {
          return e.rank;
        } else {
          return std::nullopt;
        }
      },
      body);
}

const char* category_of(const sim_event_body& body) {
  return std::visit(
      [](const auto& e) -> const char* {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core_decided>) return "core";
        if constexpr (is_one_of<T, actor_started, actor_finished>) return "actor";
        if constexpr (is_one_of<T, collective_entered, collective_left>) return "collective";
        if constexpr (is_one_of<T, transfer_submitted, transfer_page_copied, transfer_ended,
                                transfer_timed_out>) {
          return "transfer";
        }
        if constexpr (is_one_of<T, page_written, page_read>) return "memory";
        if constexpr (is_one_of<T, storage_read_started, storage_page_written,
                                storage_read_ended>) {
          return "storage";
        }
        if constexpr (is_one_of<T, message_sent, message_delivered, message_dropped,
                                message_lost>) {
          return "message";
        }
        if constexpr (is_one_of<T, fault_fired, rank_stopped, transport_torn_down,
                                misuse_attempted, misuse_answered, lifetime_misuse_attempted,
                                lifetime_misuse_answered, ignored_call_attempted,
                                ignored_call_answered, engine_freed>) {
          return "fault";
        }
        if constexpr (std::is_same_v<T, gate_changed>) return "gate";
        return "other";
      },
      body);
}

struct flow_point {
  std::uint64_t id = 0;
  const char* kind = "message";  // name and cat both: Perfetto matches (id, cat, name)
  std::optional<message_id> message;
};

struct thread_place {
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
};

class trace_builder {
 public:
  trace_builder(const std::vector<sim_event>& events, const std::vector<actor_name>& actors,
                const std::optional<finding>& found, const timeline_run& run)
      : events_(events),
        actors_(actors),
        found_(found),
        run_(run),
        names_(request_keys(run.requests)) {
    number_places();
    scan_requests();
    scan_flows();
    if (found_) {
      evidence_.insert(found_->evidence.begin(), found_->evidence.end());
      scan_pages();
    }
    // After the log: a slot per message never delivered (its arrow ends there), then one
    // where everything still open closes and the finding stands.
    clock_ = place_on_virtual_time(events_, undelivered_.size() + 1);
  }

  json build() {
    for (std::size_t i = 0; i < events_.size(); ++i) add_event(i);
    for (std::size_t k = 0; k < undelivered_.size(); ++k) {
      add_undelivered(undelivered_[k], clock_.trailing[k]);
    }
    const std::uint64_t end_ns = clock_.trailing.back().start_ns;
    // Close what the log left open (a finding or a cut-short log), in tid order.
    for (const auto& [tid, open] : open_lives_) {
      json end = event("E", open.second, open.first, end_ns);
      end["cat"] = "actor";
      end["args"] = {{"closed_at_end_of_log", true}};
      body_.push_back(std::move(end));
    }
    open_lives_.clear();
    for (const auto& [track, owner] : page_owners_) {
      json end = event("E", owner, page_place(track), end_ns);
      end["cat"] = "page";
      end["args"] = {{"closed_at_end_of_log", true}};
      body_.push_back(std::move(end));
    }
    page_owners_.clear();
    if (found_) add_finding(end_ns);

    json trace_events = metadata();
    for (json& e : body_) trace_events.push_back(std::move(e));
    return json{{"traceEvents", std::move(trace_events)},
                {"displayTimeUnit", "ms"},
                {"otherData", other_data()}};
  }

 private:
  // pid = rank + 1 and tid = actor + 1 (never 0, which Perfetto reserves for the kernel's
  // swapper); the synthetic processes and threads are numbered above every real one.
  void number_places() {
    std::uint64_t top_actor = actors_.empty() ? 0 : actors_.size() - 1;
    core::rank_id top_rank = 0;
    for (const actor_name& a : actors_) top_rank = std::max(top_rank, a.rank);
    for (const sim_event& e : events_) {
      if (e.actor != no_actor) top_actor = std::max<std::uint64_t>(top_actor, e.actor);
      if (const auto rank = rank_of(e.body)) top_rank = std::max(top_rank, *rank);
      // A message never delivered ends its arrow on its destination's world thread.
      if (const auto* sent = std::get_if<message_sent>(&e.body)) {
        top_rank = std::max(top_rank, sent->to);
      }
    }
    synthetic_tid_ = top_actor + 2;
    top_rank_ = top_rank;
  }
  std::uint64_t rank_pid(core::rank_id rank) const { return std::uint64_t{rank} + 1; }
  std::uint64_t requests_pid() const { return std::uint64_t{top_rank_} + 2; }
  std::uint64_t world_pid() const { return std::uint64_t{top_rank_} + 3; }
  std::uint64_t pages_pid() const { return std::uint64_t{top_rank_} + 4; }
  std::uint64_t rank_world_tid(core::rank_id rank) const { return synthetic_tid_ + rank; }
  std::uint64_t world_tid() const { return synthetic_tid_ + top_rank_ + 1; }
  std::uint64_t requests_tid() const { return synthetic_tid_ + top_rank_ + 2; }
  // The finding's pages, one track each (a thread of the "pages" process).
  thread_place page_place(std::size_t track) {
    return use(pages_pid(), "pages of the finding", requests_tid() + 1 + track,
               to_string(pages_[track]));
  }

  thread_place use(std::uint64_t pid, std::string process, std::uint64_t tid, std::string thread) {
    processes_.try_emplace(pid, valid_utf8(std::move(process)));
    threads_.try_emplace(tid, pid, valid_utf8(std::move(thread)));
    return {pid, tid};
  }

  thread_place place_of(const sim_event& e) {
    const auto rank = rank_of(e.body);
    if (e.actor != no_actor) {
      if (e.actor < actors_.size()) {
        const actor_name& name = actors_[e.actor];
        return use(rank_pid(name.rank), "rank " + std::to_string(name.rank), e.actor + 1,
                   to_string(name));
      }
      // An id the actor table does not know: keep it on its own thread, named by its id.
      const std::string thread = actor_text(e.actor, actors_);
      if (rank) return use(rank_pid(*rank), "rank " + std::to_string(*rank), e.actor + 1, thread);
      return use(world_pid(), "world", e.actor + 1, thread);
    }
    if (rank) {
      return use(rank_pid(*rank), "rank " + std::to_string(*rank), rank_world_tid(*rank),
                 "r" + std::to_string(*rank) + ".world");
    }
    return use(world_pid(), "world", world_tid(), "world");
  }

  // First and last event of every request, and its async id.
  void scan_requests() {
    for (std::size_t i = 0; i < events_.size(); ++i) {
      if (const auto key = request_of(events_[i].body)) {
        auto [it, inserted] = requests_.try_emplace(*key, i, i);
        if (!inserted) it->second.second = i;
      }
    }
    std::set<std::uint64_t> taken;
    for (const auto& request : requests_) {
      const core::room_key& key = request.first;
      // Huge rooms or generations could collide in the decimal reading; the next free id
      // keeps every track apart (keys are visited in order, so the choice is deterministic).
      std::uint64_t id = key.room * request_id_scale + key.generation;
      while (!taken.insert(id).second) ++id;
      request_ids_[key] = id;
    }
  }

  void scan_flows() {
    flows_out_.resize(events_.size());
    flows_in_.resize(events_.size());
    std::map<message_id, std::vector<std::size_t>> deliveries;
    struct instance {
      std::vector<std::size_t> entered;
      std::vector<std::size_t> left;
    };
    std::map<std::pair<group_id, std::uint64_t>, instance> collectives;
    for (std::size_t i = 0; i < events_.size(); ++i) {
      const sim_event_body& body = events_[i].body;
      if (const auto* sent = std::get_if<message_sent>(&body)) {
        sends_.try_emplace(sent->message, i);
      } else if (const auto* delivered = std::get_if<message_delivered>(&body)) {
        deliveries[delivered->message].push_back(i);
      } else if (const auto* entered = std::get_if<collective_entered>(&body)) {
        collectives[{entered->group, entered->sequence}].entered.push_back(i);
        collective_ops_.try_emplace({entered->group, entered->sequence}, entered->op);
      } else if (const auto* left = std::get_if<collective_left>(&body)) {
        collectives[{left->group, left->sequence}].left.push_back(i);
      }
    }
    std::uint64_t next_id = 1;
    // A message: one arrow per delivered copy (a duplicate arrives twice); a dropped or
    // undelivered one keeps its start, so the send still shows where it went nowhere.
    for (const auto& [message, send] : sends_) {
      bool delivered_any = false;
      if (const auto it = deliveries.find(message); it != deliveries.end()) {
        for (const std::size_t arrival : it->second) {
          if (arrival <= send) continue;
          flows_out_[send].push_back({next_id, "message", message});
          flows_in_[arrival].push_back({next_id, "message", message});
          ++next_id;
          delivered_any = true;
        }
      }
      if (!delivered_any) {  // the arrow ends at the end of the run, "never delivered"
        flows_out_[send].push_back({next_id, "message", message});
        undelivered_.push_back({send, next_id++});
        unanswered_.insert(send);
      }
    }
    // A collective: every member's entry to every other member's exit. Nobody leaves before
    // the last one enters, so the arrows into each exit show whom that member waited for.
    for (const auto& collective : collectives) {
      const instance& members = collective.second;
      for (const std::size_t in : members.entered) {
        const auto& entered = std::get<collective_entered>(events_[in].body);
        const bool leaves =
            std::any_of(members.left.begin(), members.left.end(), [&](std::size_t out) {
              return std::get<collective_left>(events_[out].body).rank == entered.rank;
            });
        if (!leaves) unanswered_.insert(in);  // e.g. waiting in a barrier a peer never entered
        for (const std::size_t out : members.left) {
          const auto& left = std::get<collective_left>(events_[out].body);
          if (left.rank == entered.rank || out <= in) continue;
          flows_out_[in].push_back({next_id, "collective", std::nullopt});
          flows_in_[out].push_back({next_id, "collective", std::nullopt});
          ++next_id;
        }
      }
    }
  }

  // `ns`: virtual time in nanoseconds, written as the format's microseconds.
  static json event(const char* phase, const std::string& name, thread_place at,
                    std::uint64_t ns) {
    return json{{"name", name}, {"ph", phase}, {"pid", at.pid}, {"tid", at.tid}, {"ts", micros(ns)}};
  }

  json args_of(std::size_t i) const {
    const sim_event& e = events_[i];
    json args{{"event", i},
              {"step", e.step},
              {"time_us", e.time_us},
              {"text", valid_utf8(describe(e, actors_))}};
    if (evidence_.contains(i)) args["evidence_of"] = valid_utf8(found_->invariant);
    return args;
  }

  // The name of a message or collective slice: what, and with whom.
  std::string slice_name(std::size_t i, const std::string& what) const {
    const sim_event_body& body = events_[i].body;
    if (const auto* sent = std::get_if<message_sent>(&body)) {
      return "send " + field(what, "kind") + " to rank " + std::to_string(sent->to);
    }
    if (const auto* delivered = std::get_if<message_delivered>(&body)) {
      const auto send = sends_.find(delivered->message);
      if (send == sends_.end()) return "deliver message " + std::to_string(delivered->message);
      const auto& sent = std::get<message_sent>(events_[send->second].body);
      return "deliver " + field(what_text(events_[send->second], actors_), "kind") +
             " from rank " + std::to_string(sent.from);
    }
    const auto op_name = [this](group_id group, std::uint64_t sequence) -> std::string {
      const auto op = collective_ops_.find({group, sequence});
      return op == collective_ops_.end() ? "collective" : to_string(op->second);
    };
    if (const auto* entered = std::get_if<collective_entered>(&body)) {
      return "enter " + op_name(entered->group, entered->sequence) + " g" +
             std::to_string(entered->group) + " #" + std::to_string(entered->sequence);
    }
    const auto& left = std::get<collective_left>(body);
    return "leave " + op_name(left.group, left.sequence) + " g" + std::to_string(left.group) +
           " #" + std::to_string(left.sequence);
  }

  void add_event(std::size_t i) {
    const sim_event& e = events_[i];
    const timeline_slot& slot = clock_.events[i];
    const thread_place at = place_of(e);
    const auto key = request_of(e.body);
    if (key && requests_.at(*key).first == i) add_request(*key, i, true);

    const std::string what = what_text(e, actors_);
    const char* category = category_of(e.body);
    const bool starts_life = std::holds_alternative<actor_started>(e.body) &&
                             e.actor != no_actor && !open_lives_.contains(at.tid);
    const bool ends_life =
        std::holds_alternative<actor_finished>(e.body) && open_lives_.contains(at.tid);
    const bool sliced = is_sliced(e.body);
    if (starts_life) {
      const std::string name = threads_.at(at.tid).second;
      json begin = event("B", name, at, slot.start_ns);
      begin["cat"] = category;
      begin["args"] = args_of(i);
      body_.push_back(std::move(begin));
      open_lives_.emplace(at.tid, std::make_pair(at, name));
    } else if (ends_life) {
      json end = event("E", open_lives_.at(at.tid).second, at, slot.start_ns);
      end["cat"] = category;
      end["args"] = args_of(i);
      body_.push_back(std::move(end));
      open_lives_.erase(at.tid);
    } else if (sliced) {
      json slice = event("X", valid_utf8(slice_name(i, what)), at, slot.start_ns);
      slice["cat"] = category;
      slice["dur"] = micros(slice_ns(slot));
      slice["args"] = args_of(i);
      // A send nobody received, an entry never left: what a deadlock or a drop looks like.
      if (unanswered_.contains(i)) slice["args"]["unanswered"] = true;
      body_.push_back(std::move(slice));
    } else {
      json instant = event("i", valid_utf8(kind_of(what)), at, slot.start_ns);
      instant["cat"] = category;
      instant["s"] = "t";
      instant["args"] = args_of(i);
      body_.push_back(std::move(instant));
    }
    add_page_moments(i);
    for (const flow_point& flow : flows_out_[i]) add_flow("s", flow, at, flow_ns(slot));
    for (const flow_point& flow : flows_in_[i]) add_flow("f", flow, at, flow_ns(slot));

    if (key && requests_.at(*key).second == i) add_request(*key, i, false);
  }

  static bool is_sliced(const sim_event_body& body) {
    return std::holds_alternative<message_sent>(body) ||
           std::holds_alternative<message_delivered>(body) ||
           std::holds_alternative<collective_entered>(body) ||
           std::holds_alternative<collective_left>(body);
  }

  void add_flow(const char* phase, const flow_point& flow, thread_place at, std::uint64_t ns) {
    json point = event(phase, flow.kind, at, ns);
    point["cat"] = flow.kind;
    point["id"] = flow.id;
    if (phase[0] == 'f') point["bp"] = "e";  // bind to the delivery's (the exit's) own slice
    if (flow.message) point["args"] = {{"message", *flow.message}};
    body_.push_back(std::move(point));
  }

  // A message nobody received: its arrow ends on a slice of its own after the log, on the
  // destination's world thread, marked never completed (no arrow is left dangling).
  void add_undelivered(const std::pair<std::size_t, std::uint64_t>& undelivered,
                       const timeline_slot& slot) {
    const auto [send, id] = undelivered;
    const auto& sent = std::get<message_sent>(events_[send].body);
    const thread_place at =
        use(rank_pid(sent.to), "rank " + std::to_string(sent.to), rank_world_tid(sent.to),
            "r" + std::to_string(sent.to) + ".world");
    const std::string kind = field(what_text(events_[send], actors_), "kind");
    json slice = event("X", valid_utf8("never delivered: " + kind + " from rank " +
                                       std::to_string(sent.from)),
                       at, slot.start_ns);
    slice["cat"] = "message";
    slice["dur"] = micros(slice_ns(slot));
    slice["args"] = {{"never_completed", true},
                     {"message", sent.message},
                     {"sent_at_event", send},
                     {"sent_at_step", events_[send].step},
                     {"text", "the run ended before this message was delivered"}};
    body_.push_back(std::move(slice));
    add_flow("f", {id, "message", sent.message}, at, flow_ns(slot));
  }

  void add_request(const core::room_key& key, std::size_t i, bool begin) {
    const thread_place at = use(requests_pid(), "requests", requests_tid(), "requests");
    const timeline_slot& slot = clock_.events[i];
    const std::optional<std::size_t> index = names_.index_of(key);
    json slice = event(begin ? "b" : "e", names_.name_in(core::to_string(key)), at,
                       begin ? slot.start_ns : async_end_ns(slot));
    slice["cat"] = "request";
    slice["id"] = request_ids_.at(key);
    slice["args"] = {{begin ? "first_event" : "last_event", i},
                     {"room", key.room},
                     {"generation", key.generation},
                     {"step", events_[i].step},
                     {"time_us", events_[i].time_us}};
    if (index) slice["args"]["request"] = *index;
    body_.push_back(std::move(slice));
  }

  // The finding's pages and what happened to each, by event.
  void scan_pages() {
    pages_ = finding_pages(events_, *found_);
    for (std::size_t track = 0; track < pages_.size(); ++track) {
      for (page_moment& m : page_history(events_, pages_[track])) {
        moments_[m.event].emplace_back(track, std::move(m));
      }
    }
  }

  // A page's track: a slice per owner, from allocation to free, and an instant for every
  // moment of its history (leased, written, read, freed while a transfer was in flight).
  void add_page_moments(std::size_t i) {
    const auto it = moments_.find(i);
    if (it == moments_.end()) return;
    const std::uint64_t ns = clock_.events[i].start_ns;
    for (const auto& [track, m] : it->second) {
      const thread_place at = page_place(track);
      const bool changes_owner = m.change != ownership_change::none;
      if (const auto open = page_owners_.find(track); changes_owner && open != page_owners_.end()) {
        json end = event("E", open->second, at, ns);
        end["cat"] = "page";
        end["args"] = args_of(i);
        body_.push_back(std::move(end));
        page_owners_.erase(open);
      }
      if (m.change == ownership_change::acquired && m.owner) {
        const std::string owner = core::to_string(*m.owner);
        json begin = event("B", owner, at, ns);
        begin["cat"] = "page";
        begin["args"] = args_of(i);
        body_.push_back(std::move(begin));
        page_owners_.emplace(track, owner);
      }
      json instant = event("i", valid_utf8(m.what), at, ns);
      instant["cat"] = "page";
      instant["s"] = "t";
      instant["args"] = args_of(i);
      instant["args"]["page"] = to_string(pages_[track]);
      body_.push_back(std::move(instant));
    }
  }

  void add_finding(std::uint64_t ns) {
    const thread_place at = use(world_pid(), "world", world_tid(), "world");
    json details = json::array();
    for (const std::string& line : found_->details) details.push_back(valid_utf8(line));
    json pages = json::array();
    for (const page_ref& page : pages_) pages.push_back(to_string(page));
    json instant = event("i", valid_utf8("finding " + found_->invariant), at, ns);
    instant["cat"] = "finding";
    instant["s"] = "g";
    instant["args"] = {{"invariant", valid_utf8(found_->invariant)},
                       {"message", valid_utf8(found_->message)},
                       {"evidence", found_->evidence},
                       {"details", std::move(details)},
                       {"pages", std::move(pages)}};
    body_.push_back(std::move(instant));
  }

  // What the run was and how to read the axis (the format's "otherData").
  json other_data() const {
    json out{{"kvsim_timeline", 2},
             {"ts_unit", "virtual time in microseconds"},
             {"tie_break",
              "events of one virtual microsecond are spread over it in step order, 1000/n ns "
              "apart for n events (args.step and args.time_us give the exact step and time)"},
             {"never_completed",
              "an arrow whose message was never delivered ends on a 'never delivered' slice "
              "after the run's last event"}};
    if (!run_.scenario.empty()) {
      out["scenario"] = valid_utf8(run_.scenario);
      out["variant"] = valid_utf8(run_.variant);
      out["strategy"] = valid_utf8(run_.strategy);
      out["checkers"] = valid_utf8(run_.checkers);
      out["seed"] = run_.seed;
      out["faults"] = valid_utf8(run_.faults);
      out["decisions"] = run_.decisions;
      out["steps"] = run_.steps;
    }
    out["finding"] = found_ ? json(valid_utf8(found_->message)) : json(nullptr);
    return out;
  }

  // Names first: a process per pid (named on one of its own threads: tid 0 would make
  // Perfetto invent a thread), a thread per tid.
  json metadata() const {
    json out = json::array();
    for (const auto& [pid, name] : processes_) {
      std::uint64_t tid = 0;
      for (const auto& [thread, place] : threads_) {
        if (place.first == pid) {
          tid = thread;
          break;
        }
      }
      json m = event("M", "process_name", {pid, tid}, 0);
      m["args"] = {{"name", name}};
      out.push_back(std::move(m));
    }
    for (const auto& [tid, place] : threads_) {
      json m = event("M", "thread_name", {place.first, tid}, 0);
      m["args"] = {{"name", place.second}};
      out.push_back(std::move(m));
    }
    return out;
  }

  const std::vector<sim_event>& events_;
  const std::vector<actor_name>& actors_;
  const std::optional<finding>& found_;
  const timeline_run& run_;
  const request_names names_;
  timeline_clock clock_;
  std::uint64_t synthetic_tid_ = 0;
  core::rank_id top_rank_ = 0;

  std::map<core::room_key, std::pair<std::size_t, std::size_t>> requests_;  // first, last
  std::map<core::room_key, std::uint64_t> request_ids_;
  std::map<message_id, std::size_t> sends_;
  std::map<std::pair<group_id, std::uint64_t>, collective_op> collective_ops_;
  std::vector<std::vector<flow_point>> flows_out_;
  std::vector<std::vector<flow_point>> flows_in_;
  std::vector<std::pair<std::size_t, std::uint64_t>> undelivered_;  // send event, flow id
  std::set<std::size_t> evidence_;
  std::set<std::size_t> unanswered_;  // sends never delivered, collective entries never left

  std::vector<page_ref> pages_;  // the finding's, one track each
  std::map<std::size_t, std::vector<std::pair<std::size_t, page_moment>>> moments_;  // by event
  std::map<std::size_t, std::string> page_owners_;  // open owner slice by track

  std::map<std::uint64_t, std::string> processes_;                       // by pid
  std::map<std::uint64_t, std::pair<std::uint64_t, std::string>> threads_;  // tid: pid, name
  std::map<std::uint64_t, std::pair<thread_place, std::string>> open_lives_;  // by tid
  json body_ = json::array();
};

}  // namespace

std::vector<timeline_request> timeline_requests(const scenarios::scenario_spec& spec) {
  std::vector<timeline_request> out;
  if (spec.kind != scenarios::scenario_kind::transfer) return out;
  std::map<core::room_id, core::generation_t> generations;  // requests of each room so far
  for (const scenarios::request_spec& r : spec.requests) {
    out.push_back({.key = {r.room, generations[r.room]++},
                   .pages = r.pages,
                   .arrive_at_us = r.arrive_at_us,
                   .abort = r.abort ? scenarios::to_string(*r.abort) : ""});
  }
  return out;
}

std::vector<core::room_key> request_keys(const std::vector<timeline_request>& requests) {
  std::vector<core::room_key> keys;
  keys.reserve(requests.size());
  for (const timeline_request& r : requests) keys.push_back(r.key);
  return keys;
}

json chrome_trace(const std::vector<sim_event>& events, const std::vector<actor_name>& actors,
                  const std::optional<finding>& found, const timeline_run& run) {
  return trace_builder(events, actors, found, run).build();
}

}  // namespace kvsim::sim
