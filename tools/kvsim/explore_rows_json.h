#pragma once
// The rows `kvsim explore --json` writes, read back into the explore_rows they were written
// from, so that `kvsim merge` can combine the rows of shards and print them with explore's own
// print_table, rows_json and junit_xml. Only random and pct rows come back: dpor
// searches do not shard. A row must read back to exactly the JSON it came from (rows_json of
// the row read is the row given), so a file written by another version of explore, or edited,
// is refused rather than merged into something explore would not have written.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/kvsim/explore_report.h"

namespace kvsim::tools {

// One row; input_error naming `where` ("shard-0.json, row 3") and the field otherwise.
explore_row row_from_json(const nlohmann::json& row, const std::string& where);

// Every row of an explore --json file's array; `file` names it in errors.
std::vector<explore_row> rows_from_json(const nlohmann::json& rows, const std::string& file);

}  // namespace kvsim::tools
