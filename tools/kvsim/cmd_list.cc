// kvsim list [--json] [--catalogue FILE]: every scenario with the variant that breaks it and
// the invariant that must fire.
#include <iomanip>
#include <nlohmann/json.hpp>

#include "spec/catalogue.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {

namespace {
constexpr const char* list_help =
    "usage: kvsim list [--json] [--catalogue FILE]\n"
    "  Every catalogue scenario: name, kind, the variant that breaks it, the invariant that\n"
    "  must fire, and a one-line description. --json prints a JSON array of objects\n"
    "  {name, kind, variant, invariant, description}.\n";
}  // namespace

int cmd_list(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}, {"--json"}, {"--catalogue", true}});
  if (flags.has("--help")) {
    out << list_help;
    return 0;
  }
  const auto path = flags.value("--catalogue").value_or(default_catalogue().string());
  const auto all = load_scenarios(path);
  if (flags.has("--json")) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& s : all) {
      rows.push_back({{"name", s.name},
                      {"kind", scenarios::to_string(s.kind)},
                      {"variant", s.expect.breaking_variant},
                      {"invariant", s.expect.invariant},
                      {"description", s.description}});
    }
    out << rows.dump(2) << "\n";
    return 0;
  }
  out << std::left << std::setw(24) << "scenario" << std::setw(10) << "kind" << std::setw(9)
      << "variant" << std::setw(10) << "invariant" << "description\n";
  for (const auto& s : all) {
    out << std::setw(24) << s.name << std::setw(10) << scenarios::to_string(s.kind) << std::setw(9)
        << s.expect.breaking_variant << std::setw(10) << s.expect.invariant << s.description
        << "\n";
  }
  out << "(" << all.size() << " scenarios from " << path << ")\n";
  return 0;
}

}  // namespace kvsim::tools
