// kvsim run --scenario NAME [--variant V] [--strategy S] [--seed N] [--trace FILE] [--json]
//           [--catalogue FILE] [--checkers F]: one run, its outcome, and optionally its trace.
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/trace.h"
#include "tools/kvsim/cli_args.h"
#include "spec/scenario_generator.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/run_json.h"
#include "tools/kvsim/run_one.h"
#include "tools/kvsim/strategy_spec.h"

namespace kvsim::tools {

namespace {
constexpr const char* run_help =
    "usage: kvsim run (--scenario NAME | --generate) [--variant V] [--strategy S] [--seed N]\n"
    "                 [--trace FILE] [--json] [--catalogue FILE] [--checkers F]\n"
    "  One run of a catalogue scenario with every invariant checker attached.\n"
    "  --generate  instead of a catalogue scenario, the one the seed draws from the schema\n"
    "              (as explore --generate does for that seed)\n"
    "  --variant   safe (default), a historical bug B1..B15, H1..H3, or canary (the\n"
    "              canary scenario's deliberately broken core: B1's release, run as B1)\n"
    "  --strategy  random (default) or pct:D\n"
    "  --seed      the run's seed (default 1): draws its decisions and its fault profile\n"
    "  --trace     write the run's trace (atomically) to FILE, for replay, shrink, export\n"
    "  --json      print one JSON object instead of text\n"
    "  --checkers  all (default), damage or rules: which checkers judge the run\n"
    "  exit: 0 no finding, 1 a finding, 2 bad input\n";
}  // namespace

int cmd_run(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"},
                              {"--scenario", true},
                              {"--variant", true},
                              {"--strategy", true},
                              {"--seed", true},
                              {"--trace", true},
                              {"--json"},
                              {"--catalogue", true},
                              {"--checkers", true},
                              {"--generate"}});
  if (flags.has("--help")) {
    out << run_help;
    return 0;
  }
  const auto name = flags.value("--scenario");
  if (!name == !flags.has("--generate")) {
    throw usage_error("give --scenario NAME (see 'kvsim list') or --generate");
  }
  if (flags.has("--generate") && flags.has("--catalogue")) {
    throw usage_error("--generate draws its scenario from the seed; --catalogue is for --scenario");
  }
  if (const auto trace_file = flags.value("--trace")) check_trace_output("--trace", *trace_file);
  const strategy_spec strategy = parse_strategy(flags.value_or("--strategy", "random"));
  if (strategy.exhaustive()) {
    throw usage_error("'" + strategy.text() + "' searches many runs: use 'kvsim explore'");
  }
  const core::variant variant = parse_variant(flags.value_or("--variant", "safe"));
  const std::uint64_t seed = flags.number_or("--seed", 1);
  const std::string catalogue = flags.value_or("--catalogue", default_catalogue().string());
  // --generate: the scenario `explore --generate` drew for this seed (its reproduce command).
  const auto spec = name ? find_scenario(load_scenarios(catalogue), *name, catalogue)
                         : scenarios::generate_scenario(seed);

  const properties::checker_family family = parse_checkers(flags.value_or("--checkers", "all"));
  run_setup setup{spec, variant, strategy.text(), seed, faults_for(spec, seed), family};
  const auto chooser = strategy.make(seed);
  const run_report report = run_once(setup, *chooser);
  if (const auto trace_file = flags.value("--trace")) {
    try {
      sim::write_trace(*trace_file, report.trace);
    } catch (const sim::trace_error& e) {
      throw input_error(e.what());
    }
  }
  if (flags.has("--json")) {
    out << run_json(setup, report).dump() << "\n";
  } else {
    out << "scenario " << spec.name << ", variant " << variant.name() << ", strategy "
        << strategy.text() << ", seed " << seed << " (faults: " << setup.faults.describe()
        << ")\n"
        << report.outcome.steps << " steps, " << report.decisions.size()
        << " decisions, decision hash " << hex_hash(report.decision_hash) << ", t="
        << report.outcome.time_us << "us\n";
    if (report.found) {
      out << "finding " << report.found->message << "\n";
    } else {
      out << "no finding\n";
    }
  }
  return report.found ? 1 : 0;
}

}  // namespace kvsim::tools
