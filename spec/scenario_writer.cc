// to_json: a scenario_spec in the catalogue's schema (scenarios/SCHEMA.md), the inverse of
// parse_scenario. Every field is written, so a trace header that carries a scenario inline
// states it completely; empty optionals (abort, after, pin, deadline_us) are left out.
#include "spec/catalogue.h"
#include "spec/engine_parser.h"
#include "spec/scenario_names.h"

namespace kvsim::scenarios {
namespace {

using nlohmann::json;

json topology_json(const topology_spec& t) {
  json out{{"prefill_ranks", t.prefill_ranks},
           {"decode_ranks", t.decode_ranks},
           {"attention_group", t.attention_group},
           {"pages_per_rank", t.pages_per_rank},
           {"page_bytes", t.page_bytes},
           {"tombstones", t.tombstones}};
  // Written only when not the default, so scenarios written before it existed read the same.
  if (t.allocation != core::allocation_order::lifo) {
    out["allocation"] = detail::to_string(t.allocation);
  }
  if (t.link_keys != link_keying::per_life) out["link_keys"] = detail::to_string(t.link_keys);
  if (t.concurrency != 1) out["concurrency"] = t.concurrency;
  if (!t.pages_by_rank.empty()) out["pages_by_rank"] = t.pages_by_rank;
  return out;
}

// Only what the pin names: a request without a pin is written as it always was.
json pin_json(const request_pin& pin) {
  json out = json::object();
  if (!pin.decode_pages.empty()) out["decode_pages"] = pin.decode_pages;
  if (pin.submit_at_us) out["submit_at_us"] = *pin.submit_at_us;
  if (pin.abort_at_us) out["abort_at_us"] = *pin.abort_at_us;
  return out;
}

json request_json(const request_spec& r) {
  json out{{"room", r.room},
           {"pages", r.pages},
           {"chunks", r.chunks},
           {"siblings", r.siblings},
           {"origin", to_string(r.origin)},
           {"abort_from", r.abort_from}};
  if (r.abort) out["abort"] = to_string(*r.abort);
  if (r.after) out["after"] = *r.after;
  if (r.pin) out["pin"] = pin_json(*r.pin);
  if (r.arrive_at_us) out["arrive_at_us"] = *r.arrive_at_us;
  return out;
}

json faults_json(const fault_spec& f) {
  json gates = json::array();
  for (const auto& gate : f.gates) {
    gates.push_back(json{{"request", gate.request}, {"before_page", gate.before_page}});
  }
  json states = json::array();
  for (const auto state : f.prefetch_states) states.push_back(detail::to_string(state));
  json out{{"gates", std::move(gates)}, {"prefetch_states", std::move(states)}};
  if (f.deadline_us) out["deadline_us"] = *f.deadline_us;
  // A kind scenarios had from the start is always written; a later one only when on, so that
  // scenarios (and the traces that carry them) from before it read as they did.
  for (const spec::fault_kind_row& row : spec::fault_kinds) {
    if (row.scenario_key.empty()) continue;
    if (row.written_when_off || f.on(row.kind)) out[std::string(row.scenario_key)] = f.on(row.kind);
  }
  return out;
}

}  // namespace

json to_json(const scenario_spec& spec) {
  json requests = json::array();
  for (const auto& request : spec.requests) requests.push_back(request_json(request));
  json written{{"name", spec.name},
              {"description", spec.description},
              {"kind", to_string(spec.kind)},
              {"topology", topology_json(spec.topology)},
              {"requests", std::move(requests)},
              {"faults", faults_json(spec.faults)},
              {"expect",
               {{"breaking_variant", spec.expect.breaking_variant},
                {"invariant", spec.expect.invariant}}},
              {"step_limit", spec.step_limit},
              {"heal_bound_us", spec.heal_bound_us}};
  // Optional, written when set (a scenario without it reads back the same).
  if (spec.expect.damage) written["expect"]["damage"] = *spec.expect.damage;
  if (!spec.also_expect.empty()) {
    json also = json::array();
    for (const expectation_spec& e : spec.also_expect) {
      json entry{{"breaking_variant", e.breaking_variant}, {"invariant", e.invariant}};
      if (e.damage) entry["damage"] = *e.damage;
      also.push_back(std::move(entry));
    }
    written["expect"]["also"] = std::move(also);
  }
  if (!spec.expect_probes.empty()) written["expect_probes"] = spec.expect_probes;
  if (json engine = detail::engine_json(spec.engine); !engine.empty()) {
    written["engine"] = std::move(engine);
  }
  return written;
}

json catalogue_to_json(const std::vector<scenario_spec>& scenarios) {
  json list = json::array();
  for (const auto& spec : scenarios) list.push_back(to_json(spec));
  return json{{"format", catalogue_format},
              {"version", catalogue_version},
              {"scenarios", std::move(list)}};
}

}  // namespace kvsim::scenarios
