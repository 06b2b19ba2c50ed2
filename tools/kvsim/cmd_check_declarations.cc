// kvsim check-declarations [--scenario NAME | --all] [--variant V] [--runs N] [--catalogue FILE]:
// the debug mode of the exhaustive search's independence relation. On N random runs of each
// scenario, every two neighbouring steps that declared nothing in common are swapped and the
// run replayed (sim/declaration_check.h); a swap that changes the outcome, the state digests
// or the rest of the run is a missing declaration in the world's code.
#include <iostream>

#include "scenarios/scenario_world.h"
#include "sim/declaration_check.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {
namespace {

constexpr const char* check_declarations_help =
    "usage: kvsim check-declarations [--scenario NAME | --all] [--variant V] [--runs N]\n"
    "                                [--swaps N] [--catalogue FILE]\n"
    "  Checks what the steps of a world declare they touch (what dpor's reduction trusts):\n"
    "  on random runs (seeds 1..N, default 10) of each scenario with the variant (default\n"
    "  safe), every two neighbouring steps that declared nothing in common are swapped (at\n"
    "  most --swaps per run, default 100) and the run replayed; the outcome, the state digest\n"
    "  after every later step and the rest of the run must stay the same.\n"
    "  exit: 0 no violation, 1 a violation (printed), 2 bad input\n";

}  // namespace

int cmd_check_declarations(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"},
                              {"--scenario", true},
                              {"--all"},
                              {"--variant", true},
                              {"--runs", true},
                              {"--swaps", true},
                              {"--catalogue", true}});
  if (flags.has("--help")) {
    out << check_declarations_help;
    return 0;
  }
  if (flags.has("--all") == flags.has("--scenario")) {
    throw usage_error("give exactly one of --scenario NAME and --all");
  }
  const std::uint64_t runs = flags.number_or("--runs", 10, 1, 100000);
  const std::uint64_t swaps = flags.number_or("--swaps", 100, 1, 1000000);
  const core::variant variant = parse_variant(flags.value_or("--variant", "safe"));
  const std::string catalogue = flags.value_or("--catalogue", default_catalogue().string());
  const auto all = load_scenarios(catalogue);
  std::vector<scenarios::scenario_spec> specs;
  if (flags.has("--all")) {
    specs = all;
  } else {
    specs.push_back(find_scenario(all, *flags.value("--scenario"), catalogue));
  }
  std::size_t violations = 0;
  for (const scenarios::scenario_spec& spec : specs) {
    sim::fiber_stacks stacks;  // one pool for every run of the check
    const run_setup setup{spec, variant, "declaration-check", 1,
                          scenarios::faults_as_choices(spec), properties::checker_family::all,
                          &stacks};
    const sim::dpor_run_fn run = [&setup](sim::strategy& chooser,
                                          const std::function<void(const sim::world&)>& inspect) {
      run_inspecting(setup, chooser,
                     [&](const sim::world& w, const sim::run_outcome&) { inspect(w); });
    };
    std::uint64_t swapped = 0;
    std::optional<std::string> violation;
    for (std::uint64_t seed = 1; seed <= runs && !violation; ++seed) {
      const sim::declaration_check_result r = sim::check_declarations(run, seed, swaps);
      swapped += r.swaps;
      if (r.violation) violation = "seed " + std::to_string(seed) + ": " + r.violation->what;
    }
    out << spec.name << " [" << variant.name() << "]: " << swapped << " swaps, "
        << (violation ? "VIOLATION " + *violation : "no violation") << "\n";
    violations += violation ? 1 : 0;
  }
  return violations == 0 ? 0 : 1;
}

}  // namespace kvsim::tools
