// The one sanitiser of text from outside (spec/one_line.h): control bytes escaped, values cut
// with their length, a line kept one line without escaping what was escaped already.
#include "spec/one_line.h"

#include <gtest/gtest.h>

#include <string>

namespace kvsim::sim::one_line_test {
namespace {

TEST(OneLine, EchoedEscapesControlBytesAndBackslashes) {
  EXPECT_EQ(spec::echoed("B1\n\x1b[2J\tx\\y\x7f"), "B1\\n\\x1b[2J\\tx\\\\y\\x7f");
  EXPECT_EQ(spec::echoed("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 is text, not control";
}

TEST(OneLine, EchoedCutsALongValueAndSaysHowLongItWas) {
  const std::string long_value(5'000'000, '9');
  const std::string shown = spec::echoed(long_value);
  EXPECT_EQ(shown, std::string(200, '9') + "... (5000000 bytes)");
  EXPECT_EQ(spec::echoed(std::string(200, 'a')), std::string(200, 'a')) << "at the cap: whole";
}

TEST(OneLine, ACutNeverSplitsAUtf8Character) {
  const std::string text = std::string(199, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(spec::echoed(text), std::string(199, 'a') + "... (" + std::to_string(text.size()) + " bytes)");
}

TEST(OneLine, AnErrorLineStaysOneLineAndKeepsWhatWasEscaped) {
  EXPECT_EQ(spec::error_line("file: " + spec::echoed("a\nb") + " and\nraw"), "file: a\\nb and\\nraw");
  EXPECT_LE(spec::error_line(std::string(10'000'000, 'x')).size(), spec::error_line_chars_max + 30);
}

}  // namespace
}  // namespace kvsim::sim::one_line_test
