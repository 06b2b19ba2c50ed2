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

  // A row that expects a bug is met only by a finding of the expected invariant (another
  // invariant is `found-other`); a row that expects clean, by no finding at all and every
  // code probe its scenario declares hit (else it is `unexercised`: the search never went
  // where the declared mechanisms would have been tested).
  bool met() const {
    if (expected == expectation::found) return result.first.has_value();
    return result.findings == 0 && unexercised_probes().empty();
  }
  // The declared probes (expect_probes) of a clean row that no run hit.
  std::vector<std::string> unexercised_probes() const;
};

const char* to_string(expectation e);
void print_table(std::ostream& out, const std::vector<explore_row>& rows);
nlohmann::json rows_json(const std::vector<explore_row>& rows);
std::string junit_xml(const std::vector<explore_row>& rows);
// sim::write_file_atomically, failing with input_error (exit 2) instead of trace_error.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace kvsim::tools
