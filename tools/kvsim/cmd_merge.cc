// kvsim merge [--json FILE] [--junit FILE] SHARD.json...: the --json rows of the shards of one
// `kvsim explore --shard I/N`, combined into the table, JSON and JUnit of the unsharded search
// (tools/kvsim/shard_merge.h says how).
#include <algorithm>
#include <iostream>

#include "spec/capped_read.h"
#include "spec/one_line.h"
#include "spec/unique_keys.h"
#include "spec/untrusted_json.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#include "tools/kvsim/explore_rows_json.h"
#include "tools/kvsim/output_file.h"
#include "tools/kvsim/shard_merge.h"

namespace kvsim::tools {
namespace {

constexpr const char* merge_help =
    "usage: kvsim merge [--json FILE] [--junit FILE] SHARD.json...\n"
    "  Combines what the shards of one search wrote (kvsim explore --shard I/N --json\n"
    "  SHARD.json, I = 0..N-1, the same other flags) into the table, JSON rows and JUnit\n"
    "  XML the unsharded search reports, in explore's formats: runs, findings and probe\n"
    "  hits summed; the first finding the lowest seed's, with its trace and reproduce\n"
    "  commands; a search that stops at its first finding counted up to the lowest one\n"
    "  (each shard's seeds up to it, the findings of those seeds); finding_seeds merged;\n"
    "  traces: the 10 lowest seeds' and the first findings'. Times are the shards' sums.\n"
    "  Traces stay where the shards wrote them: the merged rows name those paths.\n"
    "  --json      write the merged rows as a JSON array to FILE\n"
    "  --junit     write JUnit XML to FILE; - is standard output (the table then goes to\n"
    "              standard error)\n"
    "  Every shard must be given once, all of one N, with the same rows (scenario,\n"
    "  variant, strategy, checkers); dpor rows do not shard. Otherwise: one error\n"
    "  line, exit 2, nothing written.\n"
    "  exit: 0 every expectation held, 1 one did not, or a shard was interrupted (the\n"
    "  merged rows say interrupted: what ran is merged, but an incomplete search is no\n"
    "  verdict); 2 bad input\n";

// One shard's file: read within the merge input's cap (spec/input_caps.h), its nesting checked
// before the parser recurses, a key given twice refused; every value named in an error echoed.
shard_rows read_shard(const std::string& path) {
  const std::string file = spec::echoed(path);
  std::string text;
  try {
    text = spec::read_capped(path, spec::merge_input);
  } catch (const spec::capped_read_error& e) {
    throw input_error(file + ": " + e.what());
  }
  if (const auto excess = spec::json_nesting_exceeds(text)) {
    throw input_error(file + ": not an explore --json file (" + spec::describe(*excess) + ")");
  }
  nlohmann::json rows;
  try {
    rows = spec::parse_with_unique_keys(text);
  } catch (const spec::duplicate_json_key& e) {
    throw input_error(file + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw input_error(file + ": not JSON (" + spec::json_error_detail(e.what()) + ")");
  }
  return {file, rows_from_json(rows, file)};
}

}  // namespace

int cmd_merge(const arguments& args, std::ostream& out) {
  const cli_args flags(args, {{"--help"}, {"--json", true}, {"--junit", true}}, SIZE_MAX);
  if (flags.has("--help")) {
    out << merge_help;
    return 0;
  }
  if (flags.positionals().empty()) {
    throw usage_error("expected the shards' files (kvsim explore --shard I/N --json FILE)");
  }
  const report_outputs reports = report_outputs::checked(flags);
  std::vector<shard_rows> shards;
  for (const std::string& path : flags.positionals()) shards.push_back(read_shard(path));
  const std::vector<explore_row> rows = merge_shards(shards);
  // Every input is read and checked: only now is anything written.
  const std::string json_text = rows_json(rows).dump(2) + "\n";
  const std::string junit_text = junit_xml(rows, shard_spec{});

  std::ostream& table = reports.table_stream(out);
  print_table(table, rows);
  const auto unmet =
      std::count_if(rows.begin(), rows.end(), [](const explore_row& r) { return !r.met(); });
  const auto cut_short = std::count_if(rows.begin(), rows.end(),
                                       [](const explore_row& r) { return r.result.interrupted; });
  table << (cut_short > 0 ? std::to_string(cut_short) + " search(es) interrupted in a shard; " : "")
        << (unmet == 0 ? "every expectation held"
                       : std::to_string(unmet) + " expectation(s) not met")
        << " (" << rows.size() << " searches, strategy " << rows.front().request.strategy.text()
        << ", " << shards.size() << " shards merged)\n";
  if (reports.json) write_output(*reports.json, json_text);
  if (reports.junit) write_output(*reports.junit, junit_text);
  return unmet == 0 && cut_short == 0 ? 0 : 1;
}

}  // namespace kvsim::tools
