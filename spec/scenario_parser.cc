#include "spec/scenario_parser.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <array>
#include <set>
#include <string_view>

#include "core/variant.h"
#include "spec/catalogue.h"
#include "spec/probe_names.h"
#include "spec/json_reader.h"
#include "spec/engine_parser.h"
#include "spec/load_parser.h"
#include "spec/pin_parser.h"
#include "spec/scenario_caps.h"
#include "spec/scenario_names.h"
#include "spec/canary.h"

namespace kvsim::scenarios {
namespace detail {
namespace {

constexpr std::size_t name_max = 64;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > name_max) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

bool one_line_text(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
}

// "(got 9)" for a value in the file, "(got 2, the default)" for one that is not there.
std::string got(const json* value, std::uint64_t fallback) {
  return value != nullptr ? " (got " + shown(*value) + ")"
                          : " (got " + std::to_string(fallback) + ", the default)";
}

class scenario_parser {
 public:
  scenario_parser(const json& scenario, const std::string& where, std::optional<std::size_t> index)
      : scenario_(scenario), where_(where), in_(where + ": " + scenario_label(index)) {}

  scenario_spec parse() {
    try {
      return fields();
    } catch (const json::exception& e) {  // a safety net: the checks should catch everything
      in_.fail(catalogue_problem::wrong_type, std::string("unexpected JSON error: ") + e.what());
    }
  }

 private:
  scenario_spec fields() {
    if (!scenario_.is_object()) {
      in_.fail(catalogue_problem::wrong_type,
               "a scenario must be a JSON object (got " + shown(scenario_) + ")");
    }
    // A usable name labels every later error, even one about a misspelt "name" key.
    const json* given = json_reader::optional(scenario_, "name");
    if (given != nullptr && given->is_string() && valid_name(given->get<std::string>())) {
      in_.set_prefix(where_ + ": " + scenario_label(given->get<std::string>()));
    }
    in_.only_keys(scenario_, "",
                  {"name", "description", "kind", "topology", "requests", "load", "faults",
                   "engine", "expect", "expect_probes", "step_limit", "heal_bound_us"});
    scenario_spec spec;
    spec.name = name();
    if (const json* text = json_reader::optional(scenario_, "description")) {
      spec.description = in_.string(*text, "description");
      if (!one_line_text(spec.description)) {
        in_.fail_field(catalogue_problem::invalid_text, "description",
                       "must be one line without control characters");
      }
    }
    spec.kind = static_cast<scenario_kind>(
        in_.one_of(in_.required(scenario_, "", "kind"), "kind", kind_names));
    spec.topology = topology(in_.required(scenario_, "", "topology"), spec.kind);
    spec.requests = requests(in_.required(scenario_, "", "requests"), spec.topology);
    if (const json* load = json_reader::optional(scenario_, "load")) {
      for (request_spec& r : parse_load(in_, *load, spec.requests, spec.topology)) {
        spec.requests.push_back(std::move(r));
      }
    }
    check_world_size(spec);
    const json* faults_json = json_reader::optional(scenario_, "faults");
    if (faults_json != nullptr) spec.faults = faults(*faults_json, spec);
    check_prefetch_states(spec, faults_json);
    if (const json* engine = json_reader::optional(scenario_, "engine")) {
      spec.engine = parse_engine(in_, *engine);
    }
    const json& expect_json = in_.required(scenario_, "", "expect");
    spec.expect = expect(expect_json, "expect", spec.kind, true);
    spec.also_expect = also_expect(expect_json, spec);
    if (const json* probes = json_reader::optional(scenario_, "expect_probes")) {
      spec.expect_probes = expect_probes(*probes);
    }
    if (const json* value = json_reader::optional(scenario_, "step_limit")) {
      spec.step_limit = in_.integer(*value, "step_limit", 1, caps::step_limit_max);
    }
    if (const json* value = json_reader::optional(scenario_, "heal_bound_us")) {
      spec.heal_bound_us = in_.u64(*value, "heal_bound_us", 1);
    }
    check_pins(in_, spec);
    check_load(in_, spec);
    check_engine(in_, spec);
    return spec;
  }

  // An integer >= min (else the reader's own error) and below `limit` (else `rule`, which says
  // which other field sets the limit).
  std::uint32_t below(const json& value, const std::string& path, std::uint32_t min,
                      std::uint64_t limit, const std::string& rule) const {
    const std::uint32_t number = in_.u32(value, path, min);
    if (number >= limit) {
      in_.fail_field(catalogue_problem::out_of_range, path,
                     rule + " (got " + std::to_string(number) + ")");
    }
    return number;
  }

  std::string name() const {
    const std::string& text = in_.string(in_.required(scenario_, "", "name"), "name");
    if (!valid_name(text)) {
      in_.fail_field(catalogue_problem::invalid_text, "name",
                     "must be 1 to " + std::to_string(name_max) +
                         " characters from [A-Za-z0-9_.-] (got " + shown(json(text)) + ")");
    }
    return text;
  }

  topology_spec topology(const json& value, scenario_kind kind) const {
    const std::string path = "topology";
    in_.object(value, path);
    in_.only_keys(value, path,
                  {"prefill_ranks", "decode_ranks", "attention_group", "pages_per_rank",
                   "page_bytes", "tombstones", "allocation", "link_keys", "concurrency",
                   "pages_by_rank"});
    topology_spec t;
    const auto read = [&](const char* key, std::uint32_t& field, std::uint32_t min,
                          std::uint32_t max) {
      if (const json* number = json_reader::optional(value, key)) {
        field = static_cast<std::uint32_t>(in_.integer(*number, member_path(path, key), min, max));
      }
    };
    read("prefill_ranks", t.prefill_ranks, 1, caps::ranks_per_side_max);
    read("decode_ranks", t.decode_ranks, 1, caps::ranks_per_side_max);
    read("attention_group", t.attention_group, 1, caps::ranks_per_side_max);
    read("pages_per_rank", t.pages_per_rank, 1, caps::pages_per_rank_max);
    // More than the writer's identity header, so every page also carries canary bytes.
    read("page_bytes", t.page_bytes, spec::canary_header_bytes + 1, caps::page_bytes_max);
    // A table's capacity, not an allocation (core::bounded_key_set grows as it fills): no cap.
    read("tombstones", t.tombstones, 1, std::numeric_limits<std::uint32_t>::max());
    if (const json* order = json_reader::optional(value, "allocation")) {
      t.allocation = static_cast<core::allocation_order>(
          in_.one_of(*order, member_path(path, "allocation"), allocation_names));
    }
    if (const json* keying = json_reader::optional(value, "link_keys")) {
      t.link_keys = static_cast<link_keying>(
          in_.one_of(*keying, member_path(path, "link_keys"), link_keying_names));
    }
    read("concurrency", t.concurrency, 1, static_cast<std::uint32_t>(caps::requests_max));
    if (const json* pools = json_reader::optional(value, "pages_by_rank")) {
      // Refused here, before its length is checked against prefill and decode ranks.
      if (kind != scenario_kind::transfer) {
        in_.fail_field(catalogue_problem::inconsistent, member_path(path, "pages_by_rank"),
                       "belongs to transfer scenarios only (kind is '" +
                           std::string(to_string(kind)) + "')");
      }
      t.pages_by_rank = parse_pages_by_rank(in_, *pools, member_path(path, "pages_by_rank"),
                                            t.prefill_ranks + t.decode_ranks);
    }
    return t;
  }

  std::vector<request_spec> requests(const json& value, const topology_spec& topology) const {
    in_.array(value, "requests");
    // A scenario with a load may list none: the load adds its own.
    if (value.empty() && json_reader::optional(scenario_, "load") == nullptr) {
      in_.fail_field(catalogue_problem::out_of_range, "requests",
                     "must list at least one request (or the scenario a load)");
    }
    if (value.size() > caps::requests_max) {
      in_.fail_field(catalogue_problem::out_of_range, "requests",
                     "must list at most " + std::to_string(caps::requests_max) +
                         " requests (got " + std::to_string(value.size()) + ")");
    }
    std::vector<request_spec> list;
    for (std::size_t i = 0; i < value.size(); ++i) {
      list.push_back(request(value[i], i, topology));
    }
    return list;
  }

  request_spec request(const json& value, std::size_t index, const topology_spec& topology) const {
    const std::string path = element_path("requests", index);
    const auto at = [&](const char* key) { return member_path(path, key); };
    in_.object(value, path);
    in_.only_keys(value, path,
                  {"room", "pages", "chunks", "siblings", "abort", "origin", "abort_from", "after",
                   "pin", "arrive_at_us"});
    request_spec r;
    r.room = in_.u64(in_.required(value, path, "room"), at("room"), 0);
    const json* pages = json_reader::optional(value, "pages");
    if (pages != nullptr) r.pages = in_.u32(*pages, at("pages"), 1);
    if (r.pages > topology.smallest_pool()) {
      in_.fail_field(catalogue_problem::out_of_range, at("pages"),
                     (topology.pages_by_rank.empty() ? "must be at most topology.pages_per_rank = "
                                                     : "must fit the smallest of topology.pages_by_rank, ") +
                         std::to_string(topology.smallest_pool()) + got(pages, r.pages));
    }
    if (const json* chunks = json_reader::optional(value, "chunks")) {
      r.chunks = below(*chunks, at("chunks"), 1, r.pages + std::uint64_t{1},
                       "must be at most " + at("pages") + " = " + std::to_string(r.pages));
    }
    if (const json* siblings = json_reader::optional(value, "siblings")) {
      r.siblings = static_cast<std::uint32_t>(
          in_.integer(*siblings, at("siblings"), 1, caps::siblings_max));
    }
    if (const json* phase = json_reader::optional(value, "abort")) {
      r.abort = static_cast<abort_phase>(in_.one_of(*phase, at("abort"), abort_phase_names));
    }
    if (const json* origin = json_reader::optional(value, "origin")) {
      r.origin = static_cast<abort_origin>(in_.one_of(*origin, at("origin"), origin_names));
    }
    if (const json* ranks = json_reader::optional(value, "abort_from")) {
      r.abort_from = abort_from(*ranks, at("abort_from"), topology);
    }
    if (const json* after = json_reader::optional(value, "after")) {
      r.after = below(*after, at("after"), 0, index,
                      index == 0 ? std::string("must name an earlier request, and requests[0] is "
                                               "the first")
                                 : "must name an earlier request, an index below " +
                                       std::to_string(index));
    }
    if (const json* arrive = json_reader::optional(value, "arrive_at_us")) {
      r.arrive_at_us = in_.integer(*arrive, at("arrive_at_us"), 0, caps::pinned_time_max_us);
    }
    check_abort_fields(r, path);
    if (const json* pin = json_reader::optional(value, "pin")) {
      r.pin = parse_pin(in_, *pin, at("pin"), r, topology);
    }
    return r;
  }

  // The caps that no one field's range can say (spec/scenario_caps.h): the pages of every
  // rank together, the transfers the requests post and the bytes they move.
  void check_world_size(const scenario_spec& spec) const {
    const topology_spec& t = spec.topology;
    const bool transfer = spec.kind == scenario_kind::transfer;
    const std::uint64_t ranks =
        transfer ? std::uint64_t{t.prefill_ranks} + t.decode_ranks : t.attention_group;
    const std::string ranks_named =
        transfer ? "(prefill_ranks + decode_ranks)" : "attention_group";
    // Within the fields' own caps no product below overflows: 128 x 512 x 2^20 = 2^36 bytes,
    // 1024 x 512 x 64 x 64 x 64 = 2^37 transfers, 1024 x 512 x 2^20 x 64 x 64 = 2^51 bytes.
    std::uint64_t pages = ranks * t.pages_per_rank;
    if (!t.pages_by_rank.empty()) {
      pages = 0;
      for (const std::uint32_t pool : t.pages_by_rank) pages += pool;
    }
    const std::uint64_t bytes = pages * t.page_bytes;
    if (bytes > caps::world_bytes_max) {
      const std::string pools = t.pages_by_rank.empty()
                                    ? ranks_named + " x pages_per_rank x page_bytes = " +
                                          std::to_string(ranks) + " x " +
                                          std::to_string(t.pages_per_rank) + " x "
                                    : "the pages of topology.pages_by_rank x page_bytes = " +
                                          std::to_string(pages) + " x ";
      in_.fail_field(catalogue_problem::out_of_range, "topology",
                     "asks for " + pools + std::to_string(t.page_bytes) + " = " +
                         std::to_string(bytes) + " bytes of simulated memory, more than " +
                         std::to_string(caps::world_bytes_max) + " (256 MiB)");
    }
    const std::uint64_t pairs =
        transfer ? std::uint64_t{t.prefill_ranks} * t.decode_ranks : t.attention_group;
    std::uint64_t transfers = 0;
    std::uint64_t moved = 0;
    for (const request_spec& r : spec.requests) {
      transfers += std::uint64_t{r.chunks} * r.siblings * pairs;
      moved += std::uint64_t{r.pages} * t.page_bytes * pairs;
    }
    if (transfer && transfers > caps::transfers_max) {
      in_.fail_field(catalogue_problem::out_of_range, "requests",
                     "ask for " + std::to_string(transfers) +
                         " transfers (chunks x siblings x prefill_ranks x decode_ranks, summed "
                         "over the requests), more than " + std::to_string(caps::transfers_max));
    }
    if (moved > caps::moved_bytes_max) {
      in_.fail_field(catalogue_problem::out_of_range, "requests",
                     "move " + std::to_string(moved) + " bytes (pages x topology.page_bytes x " +
                         (transfer ? "prefill_ranks x decode_ranks" : "attention_group") +
                         ", summed over the requests), more than " +
                         std::to_string(caps::moved_bytes_max) + " (1 GiB)");
    }
  }

  std::vector<core::rank_id> abort_from(const json& value, const std::string& path,
                                        const topology_spec& topology) const {
    in_.array(value, path);
    std::vector<core::rank_id> ranks;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const core::rank_id rank =
          below(value[i], element_path(path, i), 0, topology.decode_ranks,
                "must be a decode rank, below topology.decode_ranks = " +
                    std::to_string(topology.decode_ranks));
      if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
        in_.fail_field(catalogue_problem::inconsistent, path,
                       "lists decode rank " + std::to_string(rank) + " twice");
      }
      ranks.push_back(rank);
    }
    return ranks;
  }

  void check_abort_fields(const request_spec& r, const std::string& path) const {
    if (r.abort) {
      if (r.origin == abort_origin::prefill && !r.abort_from.empty()) {
        in_.fail_field(catalogue_problem::inconsistent, member_path(path, "abort_from"),
                       "names decode ranks that abort, but origin 'prefill' means prefill fails "
                       "the request");
      }
      // A request that never reaches prefill is over only through its ABORTs: every decode
      // rank sends one, or one would wait for an outcome no prefill rank can report.
      if (*r.abort == abort_phase::before_admission &&
          (r.origin != abort_origin::decode || !r.abort_from.empty())) {
        in_.fail_field(catalogue_problem::inconsistent, member_path(path, "abort"),
                       "is 'before_admission', which every decode rank aborts: 'origin' must be "
                       "'decode' and 'abort_from' empty");
      }
      return;
    }
    if (!r.abort_from.empty()) {
      in_.fail_field(catalogue_problem::inconsistent, member_path(path, "abort_from"),
                     "is given but the request has no 'abort'");
    }
    if (r.origin != abort_origin::decode) {
      in_.fail_field(catalogue_problem::inconsistent, member_path(path, "origin"),
                     "is given but the request has no 'abort'");
    }
  }

  fault_spec faults(const json& value, const scenario_spec& spec) const {
    const std::string path = "faults";
    in_.object(value, path);
    std::vector<std::string_view> keys{"gates", "deadline_us", "prefetch_states"};
    for (const spec::fault_kind_row& row : spec::fault_kinds) {
      if (!row.scenario_key.empty()) keys.push_back(row.scenario_key);
    }
    in_.only_keys(value, path, keys);
    fault_spec f;
    if (const json* gates = json_reader::optional(value, "gates")) {
      const std::string gates_path = member_path(path, "gates");
      in_.array(*gates, gates_path);
      for (std::size_t i = 0; i < gates->size(); ++i) {
        f.gates.push_back(gate((*gates)[i], element_path(gates_path, i), spec.requests));
      }
    }
    for (const spec::fault_kind_row& row : spec::fault_kinds) {
      if (row.scenario_key.empty()) continue;
      const std::string key(row.scenario_key);
      if (const json* on = json_reader::optional(value, key.c_str())) {
        f.set(row.kind, in_.boolean(*on, member_path(path, key)));
      }
    }
    if (const json* deadline = json_reader::optional(value, "deadline_us")) {
      f.deadline_us = in_.u64(*deadline, member_path(path, "deadline_us"), 1);
    }
    if (const json* states = json_reader::optional(value, "prefetch_states")) {
      const std::string states_path = member_path(path, "prefetch_states");
      in_.array(*states, states_path);
      for (std::size_t i = 0; i < states->size(); ++i) {
        f.prefetch_states.push_back(static_cast<core::prefetch_state>(
            in_.one_of((*states)[i], element_path(states_path, i), prefetch_state_names)));
      }
    }
    return f;
  }

  fault_spec::gate_spec gate(const json& value, const std::string& path,
                             const std::vector<request_spec>& requests) const {
    in_.object(value, path);
    in_.only_keys(value, path, {"request", "before_page"});
    fault_spec::gate_spec g;
    g.request = below(in_.required(value, path, "request"), member_path(path, "request"), 0,
                      requests.size(),
                      "must name a request, an index below " + std::to_string(requests.size()));
    const std::uint32_t pages = requests[g.request].pages;
    g.before_page =
        below(in_.required(value, path, "before_page"), member_path(path, "before_page"), 0, pages,
              "must be below requests[" + std::to_string(g.request) +
                  "].pages = " + std::to_string(pages));
    return g;
  }

  void check_prefetch_states(const scenario_spec& spec, const json* faults_json) const {
    const std::string path = "faults.prefetch_states";
    const std::size_t states = spec.faults.prefetch_states.size();
    // A kind the scenario's world does not honour would do nothing there: refused.
    const std::uint8_t world = spec.kind == scenario_kind::prefetch ? spec::prefetch_world : spec::transfer_world;
    for (const spec::fault_kind_row& row : spec::fault_kinds) {
      if (!spec.faults.on(row.kind) || (row.worlds & world) != 0) continue;
      in_.fail_field(catalogue_problem::inconsistent, "faults." + std::string(row.scenario_key),
                     spec.kind == scenario_kind::prefetch
                         ? "belongs to transfer scenarios only (kind is 'prefetch')"
                         : "belongs to prefetch scenarios only (kind is 'transfer')");
    }
    if (spec.kind == scenario_kind::transfer) {
      if (states != 0) {
        in_.fail_field(catalogue_problem::inconsistent, path,
                       "belongs to prefetch scenarios only (kind is 'transfer')");
      }
      return;
    }
    if (faults_json == nullptr || !faults_json->contains("prefetch_states")) {
      in_.fail(catalogue_problem::missing_field,
               "missing required field '" + path + "' (a prefetch scenario gives each rank's state)");
    }
    if (states != spec.topology.attention_group) {
      in_.fail_field(catalogue_problem::inconsistent, path,
                     "must give one state per rank of topology.attention_group = " +
                         std::to_string(spec.topology.attention_group) + " (got " +
                         std::to_string(states) + ")");
    }
  }

  // expect.also: further breaking variants, each an object like expect itself (without an
  // `also` of its own), none repeating a variant already expected.
  std::vector<expectation_spec> also_expect(const json& expect_json, const scenario_spec& spec) const {
    std::vector<expectation_spec> also;
    const json* list = json_reader::optional(expect_json, "also");
    if (list == nullptr) return also;
    const std::string path = member_path("expect", "also");
    const json& entries = in_.array(*list, path);
    std::set<std::string> variants{spec.expect.breaking_variant};
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string entry_path = element_path(path, i);
      also.push_back(expect(entries[i], entry_path, spec.kind, false));
      if (!variants.insert(also.back().breaking_variant).second) {
        in_.fail_field(catalogue_problem::inconsistent, member_path(entry_path, "breaking_variant"),
                       "repeats " + also.back().breaking_variant +
                           ", already an expected breaking variant of this scenario");
      }
    }
    return also;
  }

  // expect_probes: names of code probes (spec/probe_names.h), each once.
  std::vector<std::string> expect_probes(const json& value) const {
    const std::string path = "expect_probes";
    const json& entries = in_.array(value, path);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string entry_path = element_path(path, i);
      const std::string& name = in_.string(entries[i], entry_path);
      if (!probe_from_string(name)) {
        in_.fail_field(catalogue_problem::unknown_value, entry_path,
                       "must be a code probe (docs/probes.md; got " + shown(entries[i]) + ")");
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        in_.fail_field(catalogue_problem::inconsistent, entry_path, "names " + name + " twice");
      }
      names.push_back(name);
    }
    return names;
  }

  expectation_spec expect(const json& value, const std::string& path, scenario_kind kind,
                          bool top) const {
    in_.object(value, path);
    if (top) {
      in_.only_keys(value, path, {"breaking_variant", "invariant", "damage", "also"});
    } else {
      in_.only_keys(value, path, {"breaking_variant", "invariant", "damage"});
    }
    expectation_spec e;
    const std::string variant_path = member_path(path, "breaking_variant");
    e.breaking_variant =
        in_.string(in_.required(value, path, "breaking_variant"), variant_path);
    const std::string invariant_path = member_path(path, "invariant");
    const json& invariant = in_.required(value, path, "invariant");
    e.invariant = in_.string(invariant, invariant_path);
    if (std::find(invariant_names.begin(), invariant_names.end(), e.invariant) ==
        invariant_names.end()) {
      in_.fail_field(catalogue_problem::unknown_value, invariant_path,
                     "must be an invariant of DOMAIN.md, I1 to I9 (got " + shown(invariant) + ")");
    }
    if (const json* damage = json_reader::optional(value, "damage")) {
      const std::string damage_path = member_path(path, "damage");
      e.damage = in_.string(*damage, damage_path);
      static constexpr std::array<std::string_view, 6> damage_invariants{"I1", "I5", "I6",
                                                                         "I7", "I8", "I9"};
      if (std::find(damage_invariants.begin(), damage_invariants.end(), *e.damage) ==
          damage_invariants.end()) {
        in_.fail_field(catalogue_problem::unknown_value, damage_path,
                       "must be a damage invariant: I1, I5, I6, I7, I8 or I9 (got " + shown(*damage) + ")");
      }
    }
    if (e.breaking_variant == canary_variant) return e;
    const auto bug = core::bug_from_string(e.breaking_variant);
    if (!bug) {
      in_.fail_field(catalogue_problem::unknown_value, variant_path,
                     "must be a bug of DOMAIN.md (B1 to B12, H1 to H3) or 'canary' (got " +
                         shown(json(e.breaking_variant)) + ")");
    }
    const bool prefetch_bug = e.breaking_variant.front() == 'H';
    if (prefetch_bug != (kind == scenario_kind::prefetch)) {
      in_.fail_field(catalogue_problem::inconsistent, variant_path,
                     e.breaking_variant + " is a " + (prefetch_bug ? "prefetch" : "transfer") +
                         " bug, but kind is '" + to_string(kind) + "'");
    }
    return e;
  }

  const json& scenario_;
  const std::string& where_;
  json_reader in_;
};

}  // namespace

std::string scenario_label(const std::string& name) { return "scenario '" + name + "'"; }

std::string scenario_label(std::optional<std::size_t> index) {
  return index ? element_path("scenarios", *index) : "scenario (unnamed)";
}

scenario_spec parse_scenario_at(const json& scenario, const std::string& where,
                                std::optional<std::size_t> index) {
  return scenario_parser(scenario, where, index).parse();
}

}  // namespace detail

scenario_spec parse_scenario(const nlohmann::json& scenario, const std::string& where) {
  return detail::parse_scenario_at(scenario, where, std::nullopt);
}

}  // namespace kvsim::scenarios
