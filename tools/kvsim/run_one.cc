#include "tools/kvsim/run_one.h"

#include "properties/all_checkers.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "sim/run_trace.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {

sim::fault_profile faults_for(const scenarios::scenario_spec& spec, std::uint64_t seed) {
  return sim::fault_profile::draw(seed, scenarios::allowed_faults(spec));
}

run_report run_once(const run_setup& setup, sim::strategy& chooser, keep what) {
  run_report report;
  run_inspecting(setup, chooser, [&](const sim::world& world, const sim::run_outcome& outcome) {
    report.outcome = outcome;
    report.found = world.found();
    report.diverged = world.diverged();
    report.decision_count = world.decisions().size();
    report.probes = scenarios::count_probes(world.events());
    if (what == keep::verdict_only || (what == keep::on_finding && !report.found)) return;
    report.decisions = world.decisions();
    report.decision_hash = sim::decision_hash(report.decisions);
    if (what == keep::outcome_only) return;
    report.events = world.events();
    report.actors = world.actor_names();
    report.trace = trace_of(setup, world);
  });
  return report;
}

sim::trace trace_of(const run_setup& setup, const sim::world& world) {
  sim::trace t = sim::capture_trace(world, scenarios::to_json(setup.spec), setup.variant.name(),
                                    setup.strategy_name, setup.seed);
  t.checkers = properties::to_string(setup.checkers);
  return t;
}

void run_inspecting(const run_setup& setup, sim::strategy& chooser, const inspector& inspect) {
  const auto w = scenarios::make_scenario_world(setup.spec, setup.variant, chooser, setup.faults,
                                                setup.stack_pool);
  properties::checker_set checkers(properties::liveness_from_us(setup.faults), setup.spec.heal_bound_us);
  checkers.attach(w->world(), setup.checkers);
  const sim::run_outcome outcome = w->run();
  inspect(w->world(), outcome);
}

std::vector<scenarios::scenario_spec> load_scenarios(const std::filesystem::path& path) {
  try {
    if (path == builtin_catalogue_name) {
      return scenarios::parse_catalogue(builtin_catalogue_text(), std::string(builtin_catalogue_name));
    }
    return scenarios::load_catalogue(path);
  } catch (const scenarios::catalogue_error& e) {
    throw input_error(e.what());
  }
}

scenarios::scenario_spec find_scenario(const std::vector<scenarios::scenario_spec>& all,
                                       const std::string& name, const std::filesystem::path& from) {
  for (const scenarios::scenario_spec& s : all) {
    if (s.name == name) return s;
  }
  throw input_error("no scenario '" + name + "' in " + from.string() + " (see 'kvsim list')");
}

properties::checker_family parse_checkers(const std::string& name) {
  const auto family = properties::checker_family_from_string(name);
  if (!family) throw usage_error("--checkers must be all, damage or rules (got '" + name + "')");
  return *family;
}

core::variant parse_variant(const std::string& name) {
  const auto v = scenarios::variant_from_name(name);
  if (!v) {
    throw usage_error("unknown variant '" + name + "' (safe, B1..B15, H1..H3, canary)");
  }
  return *v;
}

}  // namespace kvsim::tools
