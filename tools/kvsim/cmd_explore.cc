// kvsim explore [--scenario NAME | --generate | --all] [--variant V] [--strategy S] [--budget T | --runs N]
//               [--jobs N] [--shard I/N] [--out DIR] [--json FILE] [--junit FILE]
//               [--catalogue FILE] [--stop-at-first] [--checkers all|damage|rules]
//               [--max-faults K]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "spec/one_line.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/explore_report.h"
#include "tools/kvsim/interrupt.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/run_one.h"
#include "spec/scenario_generator.h"
#include "scenarios/scenario_world.h"

namespace kvsim::tools {
namespace {

constexpr const char* explore_help =
    "usage: kvsim explore [--scenario NAME | --generate | --all] [--variant V] [--strategy S]\n"
    "                     [--budget T | --runs N] [--jobs N] [--shard I/N] [--out DIR]\n"
    "                     [--json FILE] [--junit FILE] [--catalogue FILE] [--stop-at-first]\n"
    "                     [--checkers all|damage|rules] [--max-faults K]\n"
    "  Searches until the budget is spent and reports what it found.\n"
    "  --scenario  one scenario, with --variant (default safe); expected: found, as the\n"
    "              scenario's invariant, when the variant is its breaking one (another\n"
    "              invariant alone is found-other, not met), else clean (and, when the\n"
    "              scenario declares expect_probes, every one of them hit, else\n"
    "              unexercised)\n"
    "  --generate  every seed draws a fresh scenario from the schema (the scenario swarm:\n"
    "              topology, requests, aborts, gates, faults); expected: clean with safe,\n"
    "              found with any other variant; findings carry their scenario inline\n"
    "  --all       every scenario with each breaking variant it declares (expected found;\n"
    "              stops at the first finding) and with safe (expected clean, its declared\n"
    "              probes hit), and a generated row with safe; prints a table\n"
    "  --strategy  random (default), pct:D, dpor or dpor:P (exhaustive with dynamic\n"
    "              partial-order reduction, preemption bound P: one run per class of runs\n"
    "              equal up to the order of independent steps; faults are choices, see\n"
    "              --max-faults); dpor runs in one process and stops when exhausted, at\n"
    "              --runs or at --budget\n"
    "  --max-faults  dpor: at most K faults of the environment fire per run (default 1);\n"
    "              every fault opportunity is a branch until then, so an exhausted search\n"
    "              covers every interleaving with at most K faults\n"
    "  --budget    time: 500ms, 30s, 2m; with --all the searches that expect a bug run first,\n"
    "              each with an even share (they stop at their first finding), then the\n"
    "              clean searches share what is left evenly\n"
    "  --runs      seeds 1..N per search (default 1000 when no budget is given); for\n"
    "              dpor, a cap on runs: give a large --runs or a --budget to exhaust\n"
    "  --jobs      worker processes (default 1)\n"
    "  --shard     I/N: only seeds s with (s-1) mod N == I; shards are disjoint and together\n"
    "              give the unsharded seeds\n"
    "  --out       write finding traces to DIR: per search, those of the 10 lowest seeds\n"
    "              (dpor: the first 10 runs) and of the first finding; named\n"
    "              <scenario>.<variant>.<strategy>.seed<N>.json (.run<N> for dpor)\n"
    "  --json      write the rows as a JSON array to FILE (with \"probes\": {name: hits},\n"
    "              null for a search stopped at its first finding);\n"
    "              --junit: JUnit XML to FILE; - is standard output (the table then goes\n"
    "              to standard error); every output path is checked before the search\n"
    "  --checkers  all (default); damage: only what shows a bug by its consequence (I1 a\n"
    "              write into a page not the transfer's, I6, I7 bytes, I8 leaks, I9 and I5\n"
    "              hangs); rules: only the protocol rules (I2, I3, I4)\n"
    "  --stop-at-first  every search ends at its first finding (a yes/no answer, as\n"
    "              tools/mutate.sh asks; --all's breaking rows always do)\n"
    "  Results do not depend on --jobs: runs are counted in seed order, the first finding\n"
    "  is the lowest seed's, and a search that stops at it counts the seeds up to it.\n"
    "  Off a terminal, a progress line goes to standard error every 10 s. Ctrl-C or SIGTERM\n"
    "  stops the search after the runs in progress and still writes the table, JSON and\n"
    "  JUnit of what ran, marked interrupted.\n"
    "  exit: 0 every expectation held, 1 one did not, 2 bad input; interrupted: 130\n"
    "  (SIGINT) or 143 (SIGTERM), or 1 when what ran already broke an expectation;\n"
    "  4 a search worker died (killed, crashed): a line names it, and the table, JSON\n"
    "  and JUnit of what ran are written\n";

double parse_budget(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0)) {
    ++digits;
  }
  const std::string unit = text.substr(digits);
  if (digits == 0 || (unit != "s" && unit != "ms" && unit != "m")) {
    throw usage_error("--budget must be a whole number with a unit: 500ms, 30s or 2m (got '" +
                      text + "')");
  }
  const double number = static_cast<double>(parse_unsigned(text.substr(0, digits), "--budget"));
  const double seconds = unit == "ms" ? number / 1000 : unit == "m" ? number * 60 : number;
  if (seconds <= 0) throw usage_error("--budget must be above zero (got '" + text + "')");
  return seconds;
}

// A live line on a terminal; off one (a CI log), a plain line every 10 s of the whole
// command, however its time falls between searches. Both on stderr so stdout keeps the table.
class progress_line {
 public:
  progress_line() : terminal_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

  void show(const search_request& request, const search_result& so_far, std::optional<double> budget) {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!terminal_ && now - last_plain_ < plain_every_seconds) return;
    last_plain_ = now;
    char text[256];
    const double rate = so_far.seconds > 0 ? static_cast<double>(so_far.runs) / so_far.seconds : 0;
    std::snprintf(text, sizeof text, "%s [%s]: %llu runs, %.0f runs/s, %llu findings, %.1fs",
                  request.spec.name.c_str(), request.variant_label.c_str(),
                  static_cast<unsigned long long>(so_far.runs), rate,
                  static_cast<unsigned long long>(so_far.findings), so_far.seconds);
    std::string line = text;
    if (budget) line += "/" + std::to_string(static_cast<int>(*budget + 0.5)) + "s";
    if (terminal_) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else {
      std::cerr << "kvsim explore: " << line << " (" << static_cast<int>(now) << "s in)\n";
    }
  }
  void done() {
    if (terminal_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  static constexpr double plain_every_seconds = 10.0;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  double last_plain_ = 0;
};

// The invariant a breaking row must find: the scenario's own, or with the damage checkers
// only, the damage invariant it names (a rule invariant cannot fire then).
std::string expected_invariant(const scenarios::expectation_spec& expect,
                               properties::checker_family family) {
  if (family == properties::checker_family::damage && expect.damage) return *expect.damage;
  return expect.invariant;
}

// The expectation (expect or an entry of expect.also) whose variant is `variant`, if any.
std::optional<scenarios::expectation_spec> expectation_for(const scenarios::scenario_spec& spec,
                                                           const core::variant& variant) {
  for (const scenarios::expectation_spec& e : scenarios::breaking_expectations(spec)) {
    if (scenarios::breaking_variant(e) == variant) return e;
  }
  return std::nullopt;
}

// Runs the searches of `rows` (all of them, unless interrupted or a worker died: the rows
// that ran say so).
// With a budget, the searches that expect a bug run first, each with an even share of the
// whole (they stop at their first finding, leaving the rest of their share); the clean
// searches then share what is left evenly, a search that ends early (dpor exhausted)
// leaving its time to those after it. The table keeps the catalogue's order.
void run_rows(std::vector<explore_row>& rows, std::optional<double> budget_seconds) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].expected == expectation::found) order.push_back(i);
  }
  const std::size_t breaking = order.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].expected == expectation::clean) order.push_back(i);
  }
  progress_line progress;
  double spent = 0;
  bool worker_died = false;
  for (std::size_t k = 0; k < order.size() && interrupt_signal() == 0 && !worker_died; ++k) {
    explore_row& row = rows[order[k]];
    search_request& request = row.request;
    if (budget_seconds) {
      const double share = k < breaking ? *budget_seconds / static_cast<double>(rows.size())
                                        : (*budget_seconds - spent) / static_cast<double>(order.size() - k);
      request.budget_seconds = std::max(0.001, share);
    }
    row.result = run_search(request, [&](const search_result& so_far) {
      progress.show(request, so_far, request.budget_seconds);
    });
    row.ran = true;
    worker_died = row.result.worker_died.has_value();
    progress.done();
    spent += row.result.seconds;
  }
}

// What explore was asked to search with, from its flags alone: every usage error among them is
// found here, before any output is checked or any scenario loaded.
struct explore_options {
  strategy_spec strategy;
  // A plain double and a flag, not std::optional<double>: GCC 12 warns falsely on the latter.
  bool has_budget = false;
  double budget_seconds = 0.0;
  std::optional<std::uint64_t> runs;
  std::uint64_t jobs = 1;
  shard_spec shard;
  std::uint32_t max_faults = 1;
};

explore_options parse_explore_options(const cli_args& flags) {
  if (int{flags.has("--all")} + int{flags.has("--scenario")} + int{flags.has("--generate")} != 1) {
    throw usage_error("give exactly one of --scenario NAME, --generate and --all");
  }
  if (flags.has("--all") && flags.has("--variant")) {
    throw usage_error("--all runs each scenario's breaking variant and safe; --variant is for --scenario");
  }
  if (flags.has("--budget") && flags.has("--runs")) {
    throw usage_error("give at most one of --budget and --runs");
  }
  explore_options options;
  options.strategy = parse_strategy(flags.value_or("--strategy", "random"));
  options.has_budget = flags.has("--budget");
  options.budget_seconds = options.has_budget ? parse_budget(*flags.value("--budget")) : 0.0;
  options.runs = options.has_budget ? std::nullopt : std::optional(flags.number_or("--runs", 1000, 1));
  options.jobs = flags.number_or("--jobs", 1, 1, 256);
  options.shard = flags.has("--shard") ? parse_shard(*flags.value("--shard")) : shard_spec{};
  const strategy_spec& strategy = options.strategy;
  if (strategy.exhaustive() && flags.has("--generate")) {
    throw usage_error("dpor explores one scenario; --generate draws one per seed (use random or pct)");
  }
  if (strategy.exhaustive() && (options.jobs > 1 || options.shard.count > 1)) {
    throw usage_error("dpor runs in one process: --jobs and --shard apply to random and pct");
  }
  if (flags.has("--max-faults") && strategy.family != strategy_family::dpor) {
    throw usage_error("--max-faults bounds the faults of a dpor search (--strategy dpor)");
  }
  options.max_faults = static_cast<std::uint32_t>(flags.number_or("--max-faults", 1, 0, 16));
  return options;
}

// Where and how each search runs, beyond its scenario, variant and expectation.
struct row_setup {
  const explore_options& options;
  std::optional<std::filesystem::path> out_dir;
  std::string catalogue_flag;  // --catalogue as given, "" for the shipped one
  bool stop_at_first = false;  // --stop-at-first: every search, not only the breaking ones
  properties::checker_family checkers = properties::checker_family::all;
};

// The searches to run: --scenario's or --generate's one, or with --all each scenario's breaking
// variants (expected found, stopping at the first finding) and safe, then the generated swarm's.
std::vector<explore_row> explore_rows(const cli_args& flags, const row_setup& setup,
                                      const std::vector<scenarios::scenario_spec>& all,
                                      const std::string& catalogue) {
  std::vector<explore_row> rows;
  const auto add_row = [&](const scenarios::scenario_spec& spec, core::variant variant,
                           std::string label, expectation expected, bool stop_at_first,
                           bool generate = false) {
    explore_row row;
    row.request.spec = spec;
    row.request.variant = variant;
    row.request.variant_label = std::move(label);
    row.request.strategy = setup.options.strategy;
    row.request.max_seed = setup.options.runs;
    row.request.shard = setup.options.shard;
    row.request.jobs = setup.options.jobs;
    row.request.stop_at_first_finding = stop_at_first;
    row.request.out_dir = setup.out_dir;
    row.request.generate = generate;
    row.request.checkers = setup.checkers;
    row.request.max_faults = setup.options.max_faults;
    row.request.catalogue = setup.catalogue_flag;
    row.expected = expected;
    rows.push_back(std::move(row));
  };
  // The row of a generated search: named like its scenarios (each seed's is drawn in the run).
  scenarios::scenario_spec generated;
  generated.name = scenarios::generated_scenario_name;
  const bool stop_at_first = setup.stop_at_first;
  if (flags.has("--all")) {
    for (const auto& spec : all) {
      for (const scenarios::expectation_spec& e : scenarios::breaking_expectations(spec)) {
        add_row(spec, scenarios::breaking_variant(e), e.breaking_variant, expectation::found, true);
        rows.back().request.wanted_invariant = expected_invariant(e, setup.checkers);
      }
      add_row(spec, core::variant::safe(), "safe", expectation::clean, stop_at_first);
    }
    // dpor needs one fixed scenario: --all with it leaves the generated row out.
    if (!setup.options.strategy.exhaustive()) {
      add_row(generated, core::variant::safe(), "safe", expectation::clean, stop_at_first, true);
    }
  } else if (flags.has("--generate")) {
    const core::variant variant = parse_variant(flags.value_or("--variant", "safe"));
    add_row(generated, variant, variant.name(),
            variant.is_safe() ? expectation::clean : expectation::found, stop_at_first, true);
  } else {
    const auto spec = find_scenario(all, *flags.value("--scenario"), catalogue);
    const core::variant variant = parse_variant(flags.value_or("--variant", "safe"));
    const auto breaking = expectation_for(spec, variant);
    add_row(spec, variant, variant.name(), breaking ? expectation::found : expectation::clean,
            stop_at_first);
    if (breaking) rows.back().request.wanted_invariant = expected_invariant(*breaking, setup.checkers);
  }
  return rows;
}

// A search worker died: its own code, neither a verdict (0, 1) nor bad input (2).
constexpr int worker_died_exit_code = 4;

// The table's last line, the JSON and JUnit reports of the searches that ran, and the exit
// code: a dead worker's first (after the reports), then an interrupt's, then the verdict.
int report_explore(const std::vector<explore_row>& rows, const explore_options& options,
                   const report_outputs& reports, std::ostream& table) {
  std::vector<explore_row> shown(rows.begin(), rows.end());
  shown.erase(std::remove_if(shown.begin(), shown.end(), [](const explore_row& r) { return !r.ran; }),
              shown.end());
  print_table(table, shown);
  std::size_t unmet = 0;
  std::size_t broken = 0;  // rows that expected clean and found a bug: a verdict even if cut short
  for (const auto& row : shown) {
    unmet += row.met() ? 0 : 1;
    broken += row.expected == expectation::clean && row.result.findings > 0 ? 1 : 0;
  }
  const int signal = interrupt_signal();
  const auto died = std::find_if(shown.begin(), shown.end(),
                                 [](const explore_row& r) { return r.result.worker_died.has_value(); });
  const std::string ran_of = std::to_string(shown.size()) + " of " + std::to_string(rows.size());
  const shard_spec& shard = options.shard;
  table << (signal != 0                ? "interrupted after " + ran_of + " searches; "
            : died != shown.end()      ? "a search worker died after " + ran_of + " searches; "
                                       : std::string())
        << (unmet == 0 ? "every expectation held" : std::to_string(unmet) + " expectation(s) not met")
        << " (" << shown.size() << " searches, strategy " << options.strategy.text() << ", jobs "
        << options.jobs
        << (shard.count > 1 ? ", shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) : "")
        << ")\n";
  if (reports.json) write_output(*reports.json, rows_json(shown).dump(2) + "\n");
  if (reports.junit) write_output(*reports.junit, junit_xml(shown, shard));
  if (died != shown.end()) {
    // After the reports: what finished is written whatever became of the worker.
    std::cerr << spec::error_line("kvsim explore: " + *died->result.worker_died +
                                 "; the report holds what ran until then")
              << "\n";
    return worker_died_exit_code;
  }
  if (signal != 0) return broken > 0 ? 1 : interrupted_exit_code(signal);
  return unmet == 0 ? 0 : 1;
}

}  // namespace

int cmd_explore(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"},
                              {"--scenario", true},
                              {"--all"},
                              {"--generate"},
                              {"--variant", true},
                              {"--strategy", true},
                              {"--budget", true},
                              {"--runs", true},
                              {"--jobs", true},
                              {"--shard", true},
                              {"--out", true},
                              {"--json", true},
                              {"--junit", true},
                              {"--catalogue", true},
                              {"--stop-at-first"},
                              {"--checkers", true},
                              {"--max-faults", true}});
  if (flags.has("--help")) {
    out << explore_help;
    return 0;
  }
  const explore_options options = parse_explore_options(flags);
  // Every output is checked before the first run: a mistyped path costs nothing.
  const report_outputs reports = report_outputs::checked(flags);
  row_setup setup{options, std::nullopt, {}, false, properties::checker_family::all};
  if (const auto dir = flags.value("--out")) setup.out_dir = prepare_output_dir("--out", *dir);
  const std::string catalogue = flags.value_or("--catalogue", default_catalogue().string());
  const auto all = load_scenarios(catalogue);
  setup.catalogue_flag = flags.value_or("--catalogue", "");
  setup.stop_at_first = flags.has("--stop-at-first");
  setup.checkers = parse_checkers(flags.value_or("--checkers", "all"));
  std::vector<explore_row> rows = explore_rows(flags, setup, all, catalogue);

  std::ostream& table = reports.table_stream(out);
  const interrupt_scope interrupts;
  run_rows(rows, options.has_budget ? std::optional(options.budget_seconds) : std::nullopt);
  return report_explore(rows, options, reports, table);
}

int cmd_demo(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}});
  if (flags.has("--help")) {
    out << "usage: kvsim demo\n  The main job: kvsim explore --all --budget 60s --jobs <cores>:\n"
           "  every catalogue scenario with its breaking variant (must be found) and with safe\n"
           "  (must stay clean), as a table.\n";
    return 0;
  }
  const unsigned cores = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  out << "kvsim demo: kvsim explore --all --budget 60s --jobs " << cores << "\n" << std::flush;
  return cmd_explore({"--all", "--budget", "60s", "--jobs", std::to_string(cores)}, out);
}

}  // namespace kvsim::tools
