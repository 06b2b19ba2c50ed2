// kvsim check DIR [--variant V] [--junit FILE] [--json]: a corpus of traces as regression
// tests (tools/kvsim/corpus_check.h says how each trace is judged; tests/corpus/ is the one
// CI runs).
#include <algorithm>

#include "sim/trace.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/corpus_check.h"
#include "tools/kvsim/junit.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {
namespace {

constexpr const char* check_help =
    "usage: kvsim check DIR [--variant V] [--junit FILE] [--json]\n"
    "  Replays every trace (*.json) directly in DIR on the current build as a regression\n"
    "  test, on the core variant V (default safe; B1..B15, H1..H3 as for run):\n"
    "  - a trace of a historical bug (variant not safe, with its finding) is replayed\n"
    "    leniently (the prefix of its decisions that fits, then a random walk from its\n"
    "    seed) and must come out clean: a finding means the fix no longer fixes it\n"
    "  - a trace recorded with safe is replayed strictly and must come out as recorded\n"
    "    (same decisions, same finding or none): a divergence is a regression\n"
    "  Prints one line per trace (recorded variant and finding, replay, verdict, how many\n"
    "  recorded decisions fit) and a summary; under a regression, its reason and the\n"
    "  kvsim replay command that reproduces it.\n"
    "  --json     print one JSON object {corpus, variant, traces, held, regressions, rows}\n"
    "  --junit    also write a JUnit XML report to FILE, one test case per trace\n"
    "  exit: 0 every trace held, 1 a regression, 2 bad input: no such directory, no trace\n"
    "        in it, or a file that is not a trace this build reads (named; nothing runs)\n";

}  // namespace

int cmd_check(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}, {"--json"}, {"--variant", true}, {"--junit", true}}, 1);
  if (flags.has("--help")) {
    out << check_help;
    return 0;
  }
  if (flags.positionals().empty()) throw usage_error("expected a corpus DIR");
  const core::variant core_variant = parse_variant(flags.value_or("--variant", "safe"));
  const std::filesystem::path dir = flags.positionals().front();
  const std::vector<corpus_trace> corpus = load_corpus(dir);

  std::vector<corpus_verdict> verdicts;
  verdicts.reserve(corpus.size());
  for (const corpus_trace& trace : corpus) verdicts.push_back(check_trace(trace, core_variant));
  const bool all_held =
      std::all_of(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.held; });

  if (const auto junit_file = flags.value("--junit")) {
    try {
      sim::write_file_atomically(
          *junit_file, junit::report_xml("kvsim check", corpus_junit_cases(verdicts)), "report");
    } catch (const sim::trace_error& e) {
      throw input_error(e.what());
    }
  }
  if (flags.has("--json")) {
    out << corpus_json(dir, core_variant, verdicts).dump(2) << "\n";
  } else {
    out << corpus_table(verdicts) << corpus_summary(dir, core_variant, verdicts) << "\n";
  }
  return all_held ? 0 : 1;
}

}  // namespace kvsim::tools
