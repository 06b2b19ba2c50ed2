#include "tools/kvsim/junit.h"

#include <cstdio>
#include <sstream>

namespace kvsim::tools::junit {
namespace {

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

}  // namespace

std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        // XML 1.0 has no way to write the other C0 controls, not even as character
        // references: a parser rejects the whole report over one of them.
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string report_xml(std::string_view suite, const std::vector<test_case>& cases) {
  std::size_t failures = 0;
  double total = 0;
  for (const test_case& c : cases) {
    failures += c.failed ? 1 : 0;
    total += c.seconds;
  }
  const std::string name = xml_escaped(suite);
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"" << name << "\" tests=\"" << cases.size() << "\" failures=\""
      << failures << "\" time=\"" << seconds_text(total) << "\">\n"
      << "  <testsuite name=\"" << name << "\" tests=\"" << cases.size() << "\" failures=\""
      << failures << "\" errors=\"0\" time=\"" << seconds_text(total) << "\">\n";
  for (const test_case& c : cases) {
    xml << "    <testcase classname=\"" << xml_escaped(c.classname) << "\" name=\""
        << xml_escaped(c.name) << "\" time=\"" << seconds_text(c.seconds) << "\">\n";
    if (c.failed) {
      xml << "      <failure message=\"" << xml_escaped(c.failed->message) << "\">"
          << xml_escaped(c.failed->body) << "</failure>\n";
    }
    if (!c.system_out.empty()) {
      xml << "      <system-out>" << xml_escaped(c.system_out) << "</system-out>\n";
    }
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

}  // namespace kvsim::tools::junit
