#pragma once
// Text that comes from outside (scenario names, fault descriptions, file paths, JSON error
// details, a trace's finding message) must not break a one-line promise (one event per line,
// one error line per failure) nor reach a terminal as escape sequences: control characters
// and backslashes are printed escaped (\n, \t, \\, \xHH). This is the one place that escapes
// such text; every error line and every echoed value goes through it.
#include <cstddef>
#include <string>
#include <string_view>

namespace kvsim::spec {

// All of `text`, escaped.
std::string one_line(std::string_view text);

// A value from an input as a line shows it: escaped, and at most about `max_chars`
// characters of it; a longer one is cut and ends in "... (N bytes)", N its whole length.
// A finding's message, free text that runs longer than a name, gets `message_chars_max`.
inline constexpr std::size_t echoed_chars_max = 200;
inline constexpr std::size_t message_chars_max = 1000;
std::string echoed(std::string_view text, std::size_t max_chars = echoed_chars_max);

// The net under a whole error line, applied where it is printed: control characters escaped
// (backslashes are left as they are, so a value already echoed reads the same) and the line
// cut at error_line_chars_max. Whatever an error path forgot, the line stays one line.
inline constexpr std::size_t error_line_chars_max = 1000;
std::string error_line(std::string_view line);

}  // namespace kvsim::spec
