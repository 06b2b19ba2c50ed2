#include "sim/event_phrase.h"

#include <cctype>
#include <charconv>
#include <set>
#include <string_view>
#include <type_traits>

#include "spec/one_line.h"
#include "spec/trace_format.h"
#include "sim/transfer_id.h"

namespace kvsim::sim {
namespace {

using core::pages_text;

std::string room_text(const core::room_key& key) { return core::to_string(key); }

std::string pages_on(core::rank_id rank, const std::vector<core::page_index>& pages) {
  return "rank " + std::to_string(rank) + (pages.size() == 1 ? " page " : " pages ") +
         (pages.size() == 1 ? std::to_string(pages.front()) : pages_text(pages));
}

std::string transfer_text(transfer_id id, const core::room_key& owner) {
  return to_string(transfer_actor(id)) + " (" + room_text(owner) + ")";
}

const char* poll_text(core::transfer_poll poll) {
  switch (poll) {
    case core::transfer_poll::in_flight:
      return "in flight";
    case core::transfer_poll::succeeded:
      return "succeeded";
    case core::transfer_poll::failed:
      return "failed";
    case core::transfer_poll::timed_out_unconfirmed:
      return "timed out, unconfirmed";
  }
  return "unknown";
}

const char* control_text(core::control_kind kind) {
  switch (kind) {
    case core::control_kind::metadata:
      return "metadata";
    case core::control_kind::abort:
      return "ABORT";
    case core::control_kind::abort_ack:
      return "ABORT_ACK";
    case core::control_kind::status:
      return "status";
    case core::control_kind::chunk_ready:
      return "chunk_ready";
  }
  return "message";
}

// The page ledger's decisions, which the page histories and findings talk about, in the
// same words; every other core decision keeps core::describe's.
std::string core_phrase(const core::event& decided) {
  const core::rank_id rank = decided.rank;
  return std::visit(
      [&](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core::pages_allocated>) {
          return "allocates " + pages_on(rank, e.pages) + " to " + room_text(e.owner);
        } else if constexpr (std::is_same_v<T, core::lease_started>) {
          return "leases " + pages_on(rank, e.pages) + " for " + room_text(e.owner) + " as " +
                 core::to_string(e.role) + " (lease " + std::to_string(e.lease) + ")";
        } else if constexpr (std::is_same_v<T, core::lease_ended>) {
          return "ends lease " + std::to_string(e.lease) + " of " + room_text(e.owner) + " on " +
                 pages_on(rank, e.pages);
        } else if constexpr (std::is_same_v<T, core::release_requested>) {
          std::string text = room_text(e.owner) + " releases its pages on rank " +
                             std::to_string(rank) + ": freed now " + pages_text(e.freed_now);
          if (!e.deferred.empty()) text += ", deferred (still leased) " + pages_text(e.deferred);
          return text;
        } else if constexpr (std::is_same_v<T, core::page_freed>) {
          return "frees rank " + std::to_string(rank) + " page " + std::to_string(e.page) +
                 " (was " + room_text(e.owner) + "'s)";
        } else if constexpr (std::is_same_v<T, core::host_pages_allocated>) {
          return "allocates rank " + std::to_string(rank) + " host pages " + pages_text(e.pages) +
                 " to " + room_text(e.key);
        } else if constexpr (std::is_same_v<T, core::host_pages_freed>) {
          return "frees rank " + std::to_string(rank) + " host pages " + pages_text(e.pages) +
                 " of " + room_text(e.key) + " (by the " + core::to_string(e.by) + ")";
        } else {
          return core::describe(decided);
        }
      },
      decided.body);
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A "room R/gen G" (core::to_string's words) at `at` in `line`: its key and its length; none
// where there is none, or where it is part of a longer word or number.
struct key_mention {
  core::room_key key;
  std::size_t length = 0;
};

std::optional<key_mention> key_at(std::string_view line, std::size_t at) {
  constexpr std::string_view room = "room ";
  constexpr std::string_view gen = "/gen ";
  if (line.substr(at, room.size()) != room || (at > 0 && word_char(line[at - 1]))) return {};
  const char* const end = line.data() + line.size();
  const char* const room_digits = line.data() + at + room.size();
  key_mention found;
  const auto [after_room, room_error] = std::from_chars(room_digits, end, found.key.room);
  if (room_error != std::errc{} || std::string_view(after_room, end).substr(0, gen.size()) != gen) {
    return {};
  }
  const char* const gen_digits = after_room + gen.size();
  const auto [after_gen, gen_error] = std::from_chars(gen_digits, end, found.key.generation);
  if (gen_error != std::errc{} || (after_gen != end && word_char(*after_gen))) return {};
  found.length = static_cast<std::size_t>(after_gen - (line.data() + at));
  return found;
}

}  // namespace

request_names::request_names(const std::vector<core::room_key>& keys) {
  for (std::size_t i = 0; i < keys.size(); ++i) index_.try_emplace(keys[i], i);
}

std::optional<std::size_t> request_names::index_of(const core::room_key& key) const {
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::string request_names::name_in(const std::string& line) const {
  if (index_.empty()) return line;
  std::string out;
  std::set<std::size_t> named;  // the requests this line has named already
  std::size_t open = 0;         // parentheses open before position i
  std::size_t i = 0;
  while (i < line.size()) {
    const std::optional<key_mention> mention = key_at(line, i);
    const std::optional<std::size_t> index = mention ? index_of(mention->key) : std::nullopt;
    if (!index) {
      if (line[i] == '(') ++open;
      if (line[i] == ')' && open > 0) --open;
      out += line[i++];
      continue;
    }
    const std::string key = line.substr(i, mention->length);
    i += mention->length;
    std::string name = "request " + std::to_string(*index);
    if (!named.insert(*index).second) {
      out += name;
      continue;
    }
    if (line.compare(i, 2, "'s") == 0) {
      name += "'s";
      i += 2;
    }
    out += open > 0 ? name + ", " + key : name + " (" + key + ")";
  }
  return out;
}

std::string actor_text(actor_id actor, const std::vector<actor_name>& actors) {
  if (actor == no_actor) return "world";
  if (actor < actors.size()) return spec::one_line(to_string(actors[actor]));
  return "actor#" + std::to_string(actor);
}

std::string what_text(const sim_event& e, const std::vector<actor_name>& actors) {
  std::string line = describe(e, actors);
  const std::string prefix = spec::event_line_prefix(e.step, e.time_us, actor_text(e.actor, actors));
  if (line.starts_with(prefix)) line.erase(0, prefix.size());
  return line;
}

event_phrases::event_phrases(const std::vector<sim_event>& events,
                             const std::vector<actor_name>& actors)
    : events_(events), actors_(actors) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (const auto* sent = std::get_if<message_sent>(&events[i].body)) {
      sends_.try_emplace(sent->message, i);
    }
  }
}

// "ABORT #2 (room 42/gen 0)": a message as its sender named it.
std::string event_phrases::message_text(message_id message) const {
  const auto send = sends_.find(message);
  if (send == sends_.end()) return "message #" + std::to_string(message);
  const auto& sent = std::get<message_sent>(events_[send->second].body);
  return std::string(control_text(sent.kind)) + " #" + std::to_string(message) + " (" +
         room_text(sent.key) + ")";
}

std::string event_phrases::phrase(std::size_t index) const {
  const sim_event& e = events_[index];
  return std::visit(
      [&](const auto& body) -> std::string {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, core_decided>) {
          return core_phrase(body.what);
        } else if constexpr (std::is_same_v<T, actor_started>) {
          return "starts";
        } else if constexpr (std::is_same_v<T, actor_finished>) {
          return body.cancelled ? "unwound at the end of the run" : "returns";
        } else if constexpr (std::is_same_v<T, collective_entered>) {
          return "rank " + std::to_string(body.rank) + " enters " + to_string(body.op) +
                 " of group " + std::to_string(body.group) + " #" +
                 std::to_string(body.sequence) + " with " + std::to_string(body.value);
        } else if constexpr (std::is_same_v<T, collective_left>) {
          return "rank " + std::to_string(body.rank) + " leaves group " +
                 std::to_string(body.group) + " #" + std::to_string(body.sequence) + " with " +
                 std::to_string(body.result);
        } else if constexpr (std::is_same_v<T, transfer_submitted>) {
          return "submits " + transfer_text(body.transfer, body.owner) + ": " +
                 pages_on(body.source_rank, body.source_pages) + " -> " +
                 pages_on(body.destination_rank, body.destination_pages);
        } else if constexpr (std::is_same_v<T, transfer_page_copied>) {
          return transfer_text(body.transfer, body.owner) + " copies rank " +
                 std::to_string(body.source_rank) + " page " + std::to_string(body.source_page) +
                 " -> rank " + std::to_string(body.destination_rank) + " page " +
                 std::to_string(body.destination_page);
        } else if constexpr (std::is_same_v<T, transfer_ended>) {
          return transfer_text(body.transfer, body.owner) + " ends: " + poll_text(body.outcome);
        } else if constexpr (std::is_same_v<T, transfer_timed_out>) {
          return "a poll of " + transfer_text(body.transfer, body.owner) + " times out; the copy " +
                 (body.still_running ? "still runs" : "has stopped");
        } else if constexpr (std::is_same_v<T, page_written>) {
          return "fills rank " + std::to_string(body.rank) + " page " + std::to_string(body.page) +
                 " with " + room_text(body.writer) + "'s data (its page " +
                 std::to_string(body.logical_page) + ")";
        } else if constexpr (std::is_same_v<T, page_read>) {
          std::string text = room_text(body.reader) + " reads rank " + std::to_string(body.rank) +
                             " page " + std::to_string(body.page) + " (its page " +
                             std::to_string(body.logical_page) + "): ";
          if (body.intact) return text + "intact";
          return text + (body.found ? "CORRUPT, holds " + room_text(*body.found) + "'s data"
                                    : "CORRUPT");
        } else if constexpr (std::is_same_v<T, message_sent>) {
          return std::string(body.injected ? "the adversary injects " : "sends ") +
                 message_text(body.message) + " from rank " + std::to_string(body.from) +
                 " to rank " + std::to_string(body.to);
        } else if constexpr (std::is_same_v<T, message_delivered>) {
          return "delivers " + message_text(body.message) + " to rank " + std::to_string(body.to);
        } else if constexpr (std::is_same_v<T, message_dropped>) {
          return "drops " + message_text(body.message) + " (the transport resends it)";
        } else if constexpr (std::is_same_v<T, message_lost>) {
          return "loses " + message_text(body.message) + " to rank " + std::to_string(body.to) +
                 " for good";
        } else if constexpr (std::is_same_v<T, storage_read_started>) {
          return "starts storage read " + std::to_string(body.read) + " of " +
                 room_text(body.owner) + " into rank " + std::to_string(body.rank) +
                 " host pages " + pages_text(body.host_pages);
        } else if constexpr (std::is_same_v<T, storage_page_written>) {
          return "storage read " + std::to_string(body.read) + " (" + room_text(body.owner) +
                 ") writes rank " + std::to_string(body.rank) + " host page " +
                 std::to_string(body.page) + " (its page " + std::to_string(body.logical_page) +
                 ")";
        } else {
          return what_text(e, actors_);
        }
      },
      e.body);
}

}  // namespace kvsim::sim
