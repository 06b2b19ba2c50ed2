#pragma once
// What `kvsim explore` prints and writes: the table (scenario, variant, expected, result,
// runs, time to first finding), the JSON rows and the JUnit XML for CI.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tools/kvsim/explore_search.h"

namespace kvsim::tools {

enum class expectation : std::uint8_t { found, clean };

struct explore_row {
  search_request request;
  expectation expected = expectation::clean;
  search_result result;
  bool ran = false;  // false: an interrupt came before this search started

  // A row that expects a bug is met only by a finding of the expected invariant (another
  // invariant is `found-other`); a row that expects clean, by no finding at all and every
  // code probe its scenario declares hit (else it is `unexercised`: the search never went
  // where the declared mechanisms would have been tested).
  bool met() const {
    if (expected == expectation::found) return result.first.has_value();
    return result.findings == 0 && unexercised_probes().empty();
  }
  // The declared probes (expect_probes) of a clean row that no run hit (none for a row
  // stopped at its first finding: it reports no probes).
  std::vector<std::string> unexercised_probes() const;
  // A search that stops at its first finding and found it: it counted the seeds up to that
  // finding only, and reports no probe hits ("probes": null, "-"): sharded, the seeds up to
  // it ran in several shards, each past it, and a merge (kvsim merge) could not recount them.
  bool stopped_at_first_finding() const {
    return request.stop_at_first_finding && result.first.has_value();
  }
};

const char* to_string(expectation e);
// The table, then one paragraph per finding: its trace and the commands that reproduce it.
void print_table(std::ostream& out, const std::vector<explore_row>& rows);
nlohmann::json rows_json(const std::vector<explore_row>& rows);
// `shard` names the suite ("kvsim explore shard 1/4") so the reports of shards differ.
std::string junit_xml(const std::vector<explore_row>& rows, shard_spec shard);

// One-line shell commands that reproduce a finding of `row` at `seed` (random, pct: the seed;
// dpor: ignored): `kvsim replay TRACE` when its trace was written, and the `kvsim run`
// form (dpor: the `kvsim explore` that finds it again).
std::vector<std::string> reproduce_commands(const explore_row& row, std::uint64_t seed,
                                            const std::optional<std::string>& trace);

}  // namespace kvsim::tools
