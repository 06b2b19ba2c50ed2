#include "tools/kvsim/explore_rows_json.h"

#include "spec/scenario_generator.h"
#include "spec/one_line.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/seed_plan.h"

namespace kvsim::tools {
namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& where, const std::string& key,
                         const std::string& what) {
  throw input_error(where + ": \"" + key + "\" " + what);
}

const json& field(const json& object, const std::string& key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) refuse(where, key, "is missing (not a row of kvsim explore --json)");
  return *it;
}

std::string text_field(const json& object, const std::string& key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_string()) refuse(where, key, "must be a string");
  return value.get<std::string>();
}

std::uint64_t count_field(const json& object, const std::string& key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_number_unsigned()) refuse(where, key, "must be a non-negative integer");
  return value.get<std::uint64_t>();
}

double seconds_field(const json& object, const std::string& key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_number()) refuse(where, key, "must be a number");
  return value.get<double>();
}

bool flag_field(const json& object, const std::string& key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_boolean()) refuse(where, key, "must be true or false");
  return value.get<bool>();
}

std::vector<std::string> texts_field(const json& object, const std::string& key,
                                     const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_array()) refuse(where, key, "must be an array of strings");
  std::vector<std::string> texts;
  for (const json& item : value) {
    if (!item.is_string()) refuse(where, key, "must be an array of strings");
    texts.push_back(item.get<std::string>());
  }
  return texts;
}

// A word as reproduce_commands quotes it (shell_word: plain, or in single quotes with each
// quote written '\''), back to its text.
std::string shell_unquoted(const std::string& word) {
  std::string text;
  bool quoted = false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '\'') {
      quoted = !quoted;
    } else if (c == '\\' && !quoted && i + 1 < word.size()) {
      text += word[++i];
    } else {
      text += c;
    }
  }
  return text;
}

// The --catalogue a finding's reproduce commands repeat (reproduce_commands appends it last,
// as one shell word): the JSON names it nowhere else. Empty: the default catalogue.
std::string catalogue_of(const std::vector<std::string>& commands) {
  if (commands.empty()) return {};
  const std::string flag = " --catalogue ";
  const std::size_t at = commands.back().rfind(flag);
  if (at == std::string::npos) return {};
  return shell_unquoted(commands.back().substr(at + flag.size()));
}

struct read_finding {
  sim::finding finding;
  std::uint64_t seed = 0;
  std::optional<std::string> trace;
  std::vector<std::string> reproduce;
};

std::optional<read_finding> finding_field(const json& row, const std::string& key,
                                          const std::string& where) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) refuse(where, key, "must be an object or null");
  const std::string inner = where + ", " + key;
  read_finding f;
  f.finding.invariant = text_field(*it, "invariant", inner);
  f.finding.message = text_field(*it, "message", inner);
  f.seed = count_field(*it, "seed", inner);
  if (const json& trace = field(*it, "trace", inner); !trace.is_null()) {
    f.trace = text_field(*it, "trace", inner);
  }
  f.reproduce = texts_field(*it, "reproduce", inner);
  return f;
}

// The first key whose value differs between the row given and the row read back.
std::string first_difference(const json& given, const json& again) {
  for (const auto& [key, value] : given.items()) {
    if (!again.contains(key) || again.at(key) != value) return key;
  }
  for (const auto& [key, value] : again.items()) {
    if (!given.contains(key)) return key;
  }
  return "?";
}

// The search a row describes (scenario, variant, strategy, shard, checkers, what it expects,
// its budget); returns how later refusals name the row.
std::string read_request(const json& j, const std::string& where, explore_row& row) {
  search_request& q = row.request;
  q.spec.name = text_field(j, "scenario", where);
  const std::string at = where + " (" + spec::echoed(q.spec.name) + ")";
  q.generate = q.spec.name == scenarios::generated_scenario_name;
  q.variant_label = text_field(j, "variant", at);
  try {
    q.strategy = parse_strategy(text_field(j, "strategy", at));
    q.shard = parse_shard(text_field(j, "shard", at));
  } catch (const usage_error& e) {
    throw input_error(at + ": " + e.what());
  }
  if (q.strategy.exhaustive()) {
    throw input_error(at + ": a " + q.strategy.text() +
                      " search, which does not shard (only random and pct rows merge)");
  }
  const auto family = properties::checker_family_from_string(text_field(j, "checkers", at));
  if (!family) refuse(at, "checkers", "must be all, damage or rules");
  q.checkers = *family;
  const std::string expected = text_field(j, "expected", at);
  if (expected != "found" && expected != "clean") refuse(at, "expected", "must be found or clean");
  row.expected = expected == "found" ? expectation::found : expectation::clean;
  if (j.contains("expected_invariant"))
    q.wanted_invariant = text_field(j, "expected_invariant", at);
  q.spec.expect_probes = texts_field(j, "expect_probes", at);
  if (const json& budget = field(j, "budget_seconds", at); !budget.is_null()) {
    q.budget_seconds = seconds_field(j, "budget_seconds", at);
  }
  // Only a search that stopped says it would have: explore's JSON keeps no other trace of
  // --stop-at-first, and a search that found nothing ran the same seeds either way.
  q.stop_at_first_finding = flag_field(j, "stopped_at_first_finding", at);
  return at;
}

void read_probes(const json& j, const std::string& at, search_result& r) {
  const json& probes = field(j, "probes", at);
  if (probes.is_null()) return;
  if (!probes.is_object()) refuse(at, "probes", "must be an object {name: hits} or null");
  for (const auto& [name, hits] : probes.items()) {
    const auto probe = scenarios::probe_from_string(name);
    if (!probe) refuse(at, "probes", "names an unknown probe '" + spec::echoed(name) + "'");
    if (!hits.is_number_unsigned()) refuse(at, "probes", "must count hits with integers");
    r.probes[static_cast<std::size_t>(*probe)] = hits.get<std::uint64_t>();
  }
}

// What the search came to: its counts, finding seeds, probes and first findings (whose
// reproduce commands name the catalogue it ran on).
void read_result(const json& j, const std::string& at, explore_row& row) {
  search_request& q = row.request;
  search_result& r = row.result;
  r.runs = count_field(j, "runs", at);
  r.findings = count_field(j, "findings", at);
  r.seconds = seconds_field(j, "seconds", at);
  r.interrupted = flag_field(j, "interrupted", at);
  r.trace_files = texts_field(j, "traces", at);
  const json& seeds = field(j, "finding_seeds", at);
  if (!seeds.is_array()) refuse(at, "finding_seeds", "must be an array");
  for (const json& s : seeds) {
    if (!s.is_object()) refuse(at, "finding_seeds", "must hold {seed, invariant} objects");
    r.finding_seeds.push_back({count_field(s, "seed", at + ", finding_seeds"),
                               text_field(s, "invariant", at + ", finding_seeds")});
  }
  r.finding_seeds_truncated = flag_field(j, "finding_seeds_truncated", at);
  if (q.wanted_invariant) r.other_findings = count_field(j, "other_findings", at);
  read_probes(j, at, r);
  if (const auto first = finding_field(j, "first_finding", at)) {
    r.first = first->finding;
    r.first_seed = first->seed;
    r.first_trace = first->trace;
    r.seconds_to_first_finding = seconds_field(j, "seconds_to_first_finding", at);
    r.runs_to_first_finding = count_field(j, "runs_to_first_finding", at);
    q.catalogue = catalogue_of(first->reproduce);
  }
  if (const auto other = finding_field(j, "first_other_finding", at)) {
    r.first_other = other->finding;
    r.first_other_seed = other->seed;
    r.first_other_trace = other->trace;
    q.catalogue = catalogue_of(other->reproduce);
  }
}

}  // namespace

explore_row row_from_json(const json& j, const std::string& where) {
  if (!j.is_object())
    throw input_error(where + ": not an object (not a row of kvsim explore --json)");
  explore_row row;
  row.ran = true;
  const std::string at = read_request(j, where, row);
  read_result(j, at, row);
  // Everything explore writes is read above, or follows from it (result, met, reproduce,
  // unexercised_probes): written again, the row must be the row given.
  const json again = rows_json({row}).at(0);
  if (again != j) {
    throw input_error(
        at + ": \"" + spec::echoed(first_difference(j, again)) +
        "\" does not read back as written (not a row of this kvsim's explore --json)");
  }
  return row;
}

std::vector<explore_row> rows_from_json(const json& rows, const std::string& file) {
  if (!rows.is_array())
    throw input_error(file + ": not an array of rows (kvsim explore --json FILE)");
  std::vector<explore_row> read;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    read.push_back(row_from_json(rows[i], file + ", row " + std::to_string(i + 1)));
  }
  return read;
}

}  // namespace kvsim::tools
