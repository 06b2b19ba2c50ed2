#pragma once
// A JUnit XML report, the format CI systems read test results from: one test suite of test
// cases, each passed or failed with a message and a body. Every text is escaped, so a finding's
// message or a file name with '<', '&' or quotes cannot break the document.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::tools::junit {

struct failure {
  std::string message;  // one line, the attribute CI systems show first
  std::string body;     // free text: where to look, how to reproduce
};

struct test_case {
  std::string classname;
  std::string name;
  double seconds = 0;
  std::optional<failure> failed;  // empty: passed
  std::string system_out;         // free text shown with the case (may be empty)
};

// The document: <testsuites> holding one <testsuite> named `suite`.
std::string report_xml(std::string_view suite, const std::vector<test_case>& cases);

// `text` as XML character data or attribute value: markup characters as entities, control
// characters XML 1.0 cannot hold as U+FFFD.
std::string xml_escaped(std::string_view text);

}  // namespace kvsim::tools::junit
