#include "spec/load_parser.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "spec/scenario_caps.h"
#include "spec/scenario_names.h"

namespace kvsim::scenarios::detail {
namespace {

constexpr const char* load_path = "load";

std::string at(const char* key) { return member_path(load_path, key); }

// The rooms the load's requests use: `rooms` ids from `first`, cycled, so a load with fewer
// rooms than requests reuses ids and each reuse is a newer generation of its room.
struct room_cycle {
  core::room_id first = 1;
  std::uint32_t rooms = 1;
};

room_cycle read_rooms(const json_reader& in, const json& value, std::uint32_t count,
                      const std::vector<request_spec>& listed) {
  room_cycle cycle;
  cycle.rooms = count;
  if (const json* rooms = json_reader::optional(value, "rooms")) {
    cycle.rooms = static_cast<std::uint32_t>(in.integer(*rooms, at("rooms"), 1, count));
  }
  constexpr core::room_id last_id = std::numeric_limits<core::room_id>::max();
  core::room_id largest = 0;
  for (const request_spec& r : listed) largest = std::max(largest, r.room);
  if (const json* first = json_reader::optional(value, "first_room")) {
    cycle.first = in.u64(*first, at("first_room"), 0);
  } else if (largest == last_id) {  // largest + 1 would wrap around to room 0
    in.fail_field(catalogue_problem::out_of_range, at("first_room"),
                  "must be given: a listed request has room " + std::to_string(last_id) +
                      ", the largest id, so no room follows it");
  } else {
    cycle.first = largest + 1;
  }
  // The ids first .. first + rooms - 1, the last of them at most the largest id.
  if (cycle.rooms - 1 > last_id - cycle.first) {
    in.fail_field(catalogue_problem::out_of_range, at("first_room"),
                  "leaves no room for " + std::to_string(cycle.rooms) + " room ids from it (got " +
                      std::to_string(cycle.first) + ")");
  }
  return cycle;
}

// The request every load request is a copy of: its size and, for the aborted ones, its abort.
request_spec read_shape(const json_reader& in, const json& value, const topology_spec& topology) {
  request_spec shape;
  if (const json* pages = json_reader::optional(value, "pages")) {
    shape.pages = in.u32(*pages, at("pages"), 1);
  }
  if (shape.pages > topology.smallest_pool()) {
    in.fail_field(catalogue_problem::out_of_range, at("pages"),
                  "must fit the smallest pool of the topology, " +
                      std::to_string(topology.smallest_pool()) + " pages (got " +
                      std::to_string(shape.pages) + ")");
  }
  if (const json* chunks = json_reader::optional(value, "chunks")) {
    shape.chunks = static_cast<std::uint32_t>(in.integer(*chunks, at("chunks"), 1, shape.pages));
  }
  if (const json* phase = json_reader::optional(value, "abort")) {
    shape.abort = static_cast<abort_phase>(in.one_of(*phase, at("abort"), abort_phase_names));
  }
  return shape;
}

// Every rank admits the requests in index order: a request that arrived before an earlier
// one would wait for it, so the times given (arrive_at_us or pin.submit_at_us) must not
// decrease with the index (pinned submissions among themselves are check_pins' rule).
void check_arrival_order(const json_reader& in, const scenario_spec& spec) {
  std::optional<std::size_t> last_timed;  // the latest earlier request that gives a time
  const auto time_of = [&](std::size_t i) -> std::optional<std::uint64_t> {
    const request_spec& r = spec.requests[i];
    return r.arrive_at_us ? r.arrive_at_us : r.pin ? r.pin->submit_at_us : std::nullopt;
  };
  const auto field_of = [&](std::size_t i) {
    return member_path(element_path("requests", i),
                       spec.requests[i].arrive_at_us ? "arrive_at_us" : "pin.submit_at_us");
  };
  for (std::size_t i = 0; i < spec.requests.size(); ++i) {
    const std::optional<std::uint64_t> time = time_of(i);
    if (!time) continue;
    if (last_timed && *time < *time_of(*last_timed)) {
      in.fail_field(catalogue_problem::inconsistent, field_of(i),
                    "is before " + field_of(*last_timed) + " = " +
                        std::to_string(*time_of(*last_timed)) + " (got " + std::to_string(*time) +
                        "): every rank admits requests in index order, so list them in the "
                        "order they arrive (a load's requests come after the listed ones)");
    }
    last_timed = i;
  }
}

}  // namespace

std::vector<request_spec> parse_load(const json_reader& in, const json& value,
                                     const std::vector<request_spec>& listed,
                                     const topology_spec& topology) {
  in.object(value, load_path);
  in.only_keys(value, load_path,
               {"count", "inter_arrival_us", "first_arrival_us", "pages", "chunks", "rooms",
                "first_room", "abort", "abort_every"});
  const std::size_t room_left = caps::requests_max - listed.size();
  if (room_left == 0) {
    in.fail_field(catalogue_problem::out_of_range, load_path,
                  "adds requests to " + std::to_string(listed.size()) +
                      " listed ones, already the most a scenario may have (" +
                      std::to_string(caps::requests_max) + ")");
  }
  const auto count = static_cast<std::uint32_t>(
      in.integer(in.required(value, load_path, "count"), at("count"), 1, room_left));
  std::uint64_t gap_us = 0;
  if (const json* gap = json_reader::optional(value, "inter_arrival_us")) {
    gap_us = in.integer(*gap, at("inter_arrival_us"), 0, caps::pinned_time_max_us / count);
  }
  std::uint64_t first_us = 0;
  if (const json* first = json_reader::optional(value, "first_arrival_us")) {
    first_us = in.integer(*first, at("first_arrival_us"), 0, caps::pinned_time_max_us);
  }
  const room_cycle rooms = read_rooms(in, value, count, listed);
  const request_spec shape = read_shape(in, value, topology);
  std::uint32_t abort_every = 0;
  if (const json* every = json_reader::optional(value, "abort_every")) {
    abort_every = static_cast<std::uint32_t>(in.integer(*every, at("abort_every"), 1, count));
  }
  if ((abort_every != 0) != shape.abort.has_value()) {
    in.fail_field(catalogue_problem::inconsistent, abort_every != 0 ? at("abort_every") : at("abort"),
                  "needs its partner: 'abort' (the phase) and 'abort_every' (which requests) go "
                  "together");
  }
  std::vector<request_spec> added;
  for (std::uint32_t i = 0; i < count; ++i) {
    request_spec r = shape;
    r.room = rooms.first + i % rooms.rooms;
    r.arrive_at_us = first_us + gap_us * i;
    // The k-th, 2k-th, ... request is aborted by every decode rank.
    if (abort_every == 0 || (i + 1) % abort_every != 0) r.abort.reset();
    added.push_back(r);
  }
  return added;
}

std::vector<std::uint32_t> parse_pages_by_rank(const json_reader& in, const json& value,
                                               const std::string& path, std::uint32_t ranks) {
  in.array(value, path);
  if (value.size() != ranks) {
    in.fail_field(catalogue_problem::inconsistent, path,
                  "must give one pool per rank, prefill ranks then decode ranks: " +
                      std::to_string(ranks) + " (got " + std::to_string(value.size()) + ")");
  }
  std::vector<std::uint32_t> pools;
  for (std::size_t i = 0; i < value.size(); ++i) {
    pools.push_back(static_cast<std::uint32_t>(
        in.integer(value[i], element_path(path, i), 1, caps::pages_per_rank_max)));
  }
  return pools;
}

void check_load(const json_reader& in, const scenario_spec& spec) {
  const topology_spec& t = spec.topology;
  if (spec.kind != scenario_kind::transfer) {
    const bool arrivals = std::any_of(spec.requests.begin(), spec.requests.end(),
                                      [](const request_spec& r) { return r.arrive_at_us.has_value(); });
    const char* field = t.concurrency != 1      ? "topology.concurrency"
                        : !t.pages_by_rank.empty() ? "topology.pages_by_rank"
                        : arrivals                 ? "requests[].arrive_at_us (or load)"
                                                   : nullptr;
    if (field != nullptr) {
      in.fail_field(catalogue_problem::inconsistent, field,
                    "belongs to transfer scenarios only (kind is 'prefetch')");
    }
    return;
  }
  // A time the run cannot reach within its steps is a time the world cannot honour (as for a
  // pinned submission: prefill's bootstrap polls every transfer_poll_interval_us, a step each).
  const std::uint64_t reachable_us = spec.step_limit * transfer_poll_interval_us;
  for (std::size_t i = 0; i < spec.requests.size(); ++i) {
    const request_spec& r = spec.requests[i];
    if (r.arrive_at_us && *r.arrive_at_us >= reachable_us) {
      in.fail_field(catalogue_problem::inconsistent,
                    member_path(element_path("requests", i), "arrive_at_us"),
                    "is " + std::to_string(*r.arrive_at_us) + " us, past what a run of step_limit = " +
                        std::to_string(spec.step_limit) + " steps reaches (about " +
                        std::to_string(reachable_us) + " us); raise step_limit or arrive sooner");
    }
    if (r.arrive_at_us && r.pin && r.pin->submit_at_us) {
      in.fail_field(catalogue_problem::inconsistent,
                    member_path(element_path("requests", i), "arrive_at_us"),
                    "and pin.submit_at_us both say when the request arrives: give one");
    }
  }
  check_arrival_order(in, spec);
}

}  // namespace kvsim::scenarios::detail
