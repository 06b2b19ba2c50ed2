#include "tools/kvsim/trace_input.h"

#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "spec/one_line.h"
#include "sim/search/replay.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {

run_setup loaded_trace::setup(std::string strategy_name,
                              std::optional<core::variant> core_variant) const {
  // The loader accepts only the three family names, so the lookup cannot fail here.
  return run_setup{spec, core_variant.value_or(variant), std::move(strategy_name), trace.seed,
                   trace.faults,
                   properties::checker_family_from_string(trace.checkers).value_or(
                       properties::checker_family::all)};
}

loaded_trace load_trace_file(const std::filesystem::path& path) {
  loaded_trace loaded;
  try {
    loaded.trace = sim::load_trace(path);
  } catch (const sim::trace_error& e) {
    throw input_error(e.what());
  }
  try {
    loaded.spec =
        scenarios::parse_scenario(loaded.trace.scenario, spec::echoed(path.string()) + ": scenario");
  } catch (const scenarios::catalogue_error& e) {
    throw input_error(e.what());
  }
  const auto v = scenarios::variant_from_name(loaded.trace.variant);
  if (!v) {
    throw input_error(spec::echoed(path.string()) + ": unknown core variant '" +
                      spec::echoed(loaded.trace.variant) + "'");
  }
  loaded.variant = *v;
  return loaded;
}

run_report replay_strictly(const loaded_trace& loaded, std::optional<core::variant> core_variant) {
  sim::replay chooser(loaded.trace.decisions, sim::replay_mode::strict);
  return run_once(loaded.setup(loaded.trace.strategy, core_variant), chooser);
}

bool same_finding(const std::optional<sim::finding>& a, const std::optional<sim::finding>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->invariant == b->invariant && a->message == b->message);
}

}  // namespace kvsim::tools
