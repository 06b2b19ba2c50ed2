#include "tools/kvsim/explore_report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

#include "spec/one_line.h"
#include "sim/trace.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/junit.h"
#include "tools/kvsim/shell_word.h"

namespace kvsim::tools {
namespace {

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fs", seconds);
  return text;
}

std::string result_text(const explore_row& row) {
  if (row.result.first) return "found";
  if (row.result.findings > 0) return "found-other";
  return row.unexercised_probes().empty() ? "clean" : "unexercised";
}

// "12/12" probes declared by the scenario and hit; "-" when it declares none (or expects a
// bug: a red row stops at its first finding, so its probes say little).
std::string probes_text(const explore_row& row) {
  const auto& declared = row.request.spec.expect_probes;
  if (declared.empty() || row.expected == expectation::found || row.stopped_at_first_finding()) {
    return "-";
  }
  return std::to_string(declared.size() - row.unexercised_probes().size()) + "/" +
         std::to_string(declared.size());
}


// The first finding of the row's wanted kind, else the first other one: seed and trace.
struct shown_finding {
  const sim::finding* finding = nullptr;
  std::uint64_t seed = 0;
  std::optional<std::string> trace;
};
shown_finding first_shown(const search_result& r) {
  if (r.first) return {&*r.first, *r.first_seed, r.first_trace};
  if (r.first_other) return {&*r.first_other, *r.first_other_seed, r.first_other_trace};
  return {};
}

nlohmann::json finding_json(const explore_row& row, const sim::finding& f, std::uint64_t seed,
                            const std::optional<std::string>& trace) {
  return {{"invariant", f.invariant},
          {"message", f.message},
          {"seed", seed},
          {"trace", trace ? nlohmann::json(*trace) : nlohmann::json(nullptr)},
          {"reproduce", reproduce_commands(row, seed, trace)}};
}

}  // namespace

std::vector<std::string> reproduce_commands(const explore_row& row, std::uint64_t seed,
                                            const std::optional<std::string>& trace) {
  const search_request& q = row.request;
  std::vector<std::string> commands;
  if (trace) commands.push_back("kvsim replay " + shell_word(*trace));
  std::string command;
  if (q.strategy.exhaustive()) {
    // Every run of a dpor search shares the seed; its decisions come from the search,
    // which is deterministic: the same search stops at the same first finding.
    command = "kvsim explore --scenario " + shell_word(q.spec.name) + " --variant " +
              shell_word(q.variant_label) + " --strategy " + q.strategy.text() +
              " --stop-at-first --out DIR";
    if (q.max_seed) command += " --runs " + std::to_string(*q.max_seed);
    if (q.strategy.family == strategy_family::dpor && q.max_faults != 1) {
      command += " --max-faults " + std::to_string(q.max_faults);
    }
  } else {
    command = "kvsim run " +
              (q.generate ? std::string("--generate") : "--scenario " + shell_word(q.spec.name)) +
              " --variant " + shell_word(q.variant_label) + " --strategy " + q.strategy.text() +
              " --seed " + std::to_string(seed) + " --trace TRACE.json";
  }
  if (q.checkers != properties::checker_family::all) {
    command += std::string(" --checkers ") + properties::to_string(q.checkers);
  }
  if (!q.catalogue.empty()) command += " --catalogue " + shell_word(q.catalogue);
  commands.push_back(command);
  return commands;
}

const char* to_string(expectation e) { return e == expectation::found ? "found" : "clean"; }

std::vector<std::string> explore_row::unexercised_probes() const {
  std::vector<std::string> missed;
  if (expected == expectation::found || stopped_at_first_finding()) return missed;
  for (const std::string& name : request.spec.expect_probes) {
    const auto p = scenarios::probe_from_string(name);
    if (!p || result.probes[static_cast<std::size_t>(*p)] == 0) missed.push_back(name);
  }
  return missed;
}

// Names, invariants, messages and paths are echoed (escaped, cut short): merge prints rows it
// read from files, and nothing in a file may add a line to the table or reach the terminal.
void print_table(std::ostream& out, const std::vector<explore_row>& rows) {
  using spec::echoed;
  out << std::left << std::setw(24) << "scenario" << std::setw(8) << "variant" << std::setw(9)
      << "expected" << std::setw(12) << "result" << std::setw(4) << "ok" << std::right
      << std::setw(9) << "runs" << std::setw(10) << "findings" << std::setw(8) << "probes"
      << "  first finding\n";
  for (const explore_row& row : rows) {
    out << std::left << std::setw(24) << spec::echoed(row.request.spec.name) << std::setw(8)
        << spec::echoed(row.request.variant_label) << std::setw(9) << to_string(row.expected) << std::setw(12)
        << result_text(row) << std::setw(4) << (row.met() ? "yes" : "NO") << std::right
        << std::setw(9) << row.result.runs << std::setw(10) << row.result.findings
        << std::setw(8) << probes_text(row) << "  ";
    if (row.result.first) {
      out << spec::echoed(row.result.first->invariant) << " after " << *row.result.runs_to_first_finding
          << " run(s), " << seconds_text(*row.result.seconds_to_first_finding) << ", seed "
          << *row.result.first_seed;
    } else if (row.result.first_other) {
      out << "only " << spec::echoed(row.result.first_other->invariant) << " (expected "
          << spec::echoed(row.request.wanted_invariant.value_or("?")) << "), first at seed "
          << *row.result.first_other_seed;
    } else if (const auto missed = row.unexercised_probes(); !missed.empty()) {
      out << "never hit:";
      for (const std::string& name : missed) out << " " << name;
    } else {
      out << "-";
    }
    if (row.result.exhausted) {
      out << (*row.result.exhausted ? "  [exhausted" : "  [not exhausted") << ", "
          << row.result.pruned << " pruned";
      if (row.result.max_faults) {
        // What an exhausted dpor search covered, in words.
        out << ", " << *row.result.distinct_outcomes << " outcomes, "
            << *row.result.distinct_states << " states; all interleavings with at most "
            << *row.result.max_faults << (*row.result.max_faults == 1 ? " fault" : " faults");
        if (row.request.strategy.preemption_bound) {
          out << ", within " << *row.request.strategy.preemption_bound << " preemptions";
        }
      }
      out << "]";
    }
    if (row.result.worker_died) {
      out << "  [a worker died]";
    } else if (row.result.interrupted) {
      out << "  [interrupted]";
    }
    out << "\n";
  }
  for (const explore_row& row : rows) {
    const shown_finding shown = first_shown(row.result);
    if (shown.finding == nullptr) continue;
    out << "\n" << spec::echoed(row.request.spec.name) << " [" << spec::echoed(row.request.variant_label) << "] at "
        << (row.request.strategy.exhaustive() ? "run " + std::to_string(*row.result.runs_to_first_finding)
                                              : "seed " + std::to_string(shown.seed))
        << ": " << spec::echoed(shown.finding->message, spec::message_chars_max) << "\n";
    out << "  trace:     "
        << (shown.trace ? spec::echoed(*shown.trace, spec::message_chars_max)
                        : std::string("(not written: give --out DIR)"))
        << "\n";
    for (const std::string& command : reproduce_commands(row, shown.seed, shown.trace)) {
      out << "  reproduce: " << spec::echoed(command, spec::message_chars_max) << "\n";
    }
  }
}

nlohmann::json rows_json(const std::vector<explore_row>& rows) {
  nlohmann::json array = nlohmann::json::array();
  for (const explore_row& row : rows) {
    const search_result& r = row.result;
    nlohmann::json j{{"scenario", row.request.spec.name},
                     {"variant", row.request.variant_label},
                     {"strategy", row.request.strategy.text()},
                     {"checkers", properties::to_string(row.request.checkers)},
                     {"expected", to_string(row.expected)},
                     {"result", result_text(row)},
                     {"met", row.met()},
                     {"runs", r.runs},
                     {"findings", r.findings},
                     {"seconds", r.seconds},
                     {"seconds_to_first_finding", nullptr},
                     {"runs_to_first_finding", nullptr},
                     {"first_finding", nullptr},
                     {"traces", r.trace_files}};
    j["budget_seconds"] = row.request.budget_seconds ? nlohmann::json(*row.request.budget_seconds)
                                                     : nlohmann::json(nullptr);
    j["shard"] = std::to_string(row.request.shard.index) + "/" + std::to_string(row.request.shard.count);
    j["interrupted"] = r.interrupted;
    j["stopped_at_first_finding"] = row.stopped_at_first_finding();
    if (!row.request.strategy.exhaustive()) {
      nlohmann::json seeds = nlohmann::json::array();
      for (const auto& f : r.finding_seeds) seeds.push_back({{"seed", f.seed}, {"invariant", f.invariant}});
      j["finding_seeds"] = std::move(seeds);
      j["finding_seeds_truncated"] = r.finding_seeds_truncated;
    }
    if (r.first) {
      j["seconds_to_first_finding"] = *r.seconds_to_first_finding;
      j["runs_to_first_finding"] = *r.runs_to_first_finding;
      j["first_finding"] = finding_json(row, *r.first, *r.first_seed, r.first_trace);
    }
    if (row.request.wanted_invariant) {
      j["expected_invariant"] = *row.request.wanted_invariant;
      j["other_findings"] = r.other_findings;
      if (r.first_other) {
        j["first_other_finding"] =
            finding_json(row, *r.first_other, *r.first_other_seed, r.first_other_trace);
      }
    }
    nlohmann::json probes = nlohmann::json::object();
    for (std::size_t i = 0; i < scenarios::probe_count; ++i) {
      probes[scenarios::to_string(static_cast<scenarios::probe>(i))] = r.probes[i];
    }
    j["probes"] = row.stopped_at_first_finding() ? nlohmann::json(nullptr) : std::move(probes);
    j["expect_probes"] = row.request.spec.expect_probes;
    j["unexercised_probes"] = row.unexercised_probes();
    if (r.exhausted) {
      j["exhausted"] = *r.exhausted;
      j["pruned"] = r.pruned;
      j["bound"] = row.request.strategy.preemption_bound
                       ? nlohmann::json(*row.request.strategy.preemption_bound)
                       : nlohmann::json(nullptr);
    }
    if (r.max_faults) {
      j["max_faults"] = *r.max_faults;
      j["distinct_states"] = r.distinct_states.value_or(0);
      j["distinct_outcomes"] = r.distinct_outcomes.value_or(0);
      j["sleep_blocked"] = r.sleep_blocked;
      j["found_within_deviations"] =
          r.deviation_bound ? nlohmann::json(*r.deviation_bound) : nlohmann::json(nullptr);
    }
    array.push_back(std::move(j));
  }
  return array;
}

std::string junit_xml(const std::vector<explore_row>& rows, shard_spec shard) {
  const std::string shard_text = shard.count > 1 ? " shard " + std::to_string(shard.index) + "/" +
                                                       std::to_string(shard.count)
                                                 : std::string();
  std::vector<junit::test_case> cases;
  for (const explore_row& row : rows) {
    junit::test_case c;
    c.classname = "kvsim.explore." + row.request.spec.name;
    c.name = row.request.spec.name + " [" + row.request.variant_label + ", " +
             row.request.strategy.text() + (shard.count > 1 ? "," : "") + shard_text + "]";
    c.seconds = row.result.seconds;
    const shown_finding shown = first_shown(row.result);
    // Where the first finding's trace is and how to get it again: in the failure's body and
    // in the case's output, so a CI page shows it for a red row and a green one alike.
    std::string where;
    if (shown.finding != nullptr) {
      where = "trace: " + shown.trace.value_or("(not written: give --out DIR)");
      for (const std::string& command : reproduce_commands(row, shown.seed, shown.trace)) {
        where += "\nreproduce: " + command;
      }
    }
    if (!row.met()) {
      std::string why;
      if (const auto missed = row.unexercised_probes(); !missed.empty() && row.result.findings == 0) {
        why = "unexercised: no run hit the declared probe(s)";
        for (const std::string& probe_name : missed) why += " " + probe_name;
      } else if (row.expected == expectation::clean) {
        why = "expected clean, found " + shown.finding->invariant + " at seed " +
              std::to_string(shown.seed) + ": " + shown.finding->message;
      } else if (row.result.first_other) {
        why = "expected " + row.request.wanted_invariant.value_or("a finding") + ", found only " +
              row.result.first_other->invariant + " (" + std::to_string(row.result.other_findings) +
              " findings in " + std::to_string(row.result.runs) + " runs, first at seed " +
              std::to_string(*row.result.first_other_seed) + ")";
      } else {
        why = "expected a finding, none in " + std::to_string(row.result.runs) + " runs";
      }
      c.failed = junit::failure{why, where.empty() ? where : where + "\n"};
    }
    c.system_out = "runs " + std::to_string(row.result.runs) + ", findings " +
                   std::to_string(row.result.findings);
    if (row.result.interrupted) c.system_out += ", interrupted";
    if (shown.finding != nullptr) {
      c.system_out += "\nfirst finding: " + shown.finding->message + "\n" + where;
    }
    cases.push_back(std::move(c));
  }
  return junit::report_xml("kvsim explore" + shard_text, cases);
}

}  // namespace kvsim::tools
