#pragma once
// JSON from outside (a catalogue, a trace) is checked before it is parsed and is shown in
// error lines without recursion. nlohmann's parser, its destructor and dump() all recurse once
// per level of nesting, so 100,000 nested brackets overflow the stack (SIGSEGV) before any
// field check runs; and an error line that dumps the offending value whole can be as long as
// the file. So: a byte scan refuses deep nesting first, and values are shown flat and short.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvsim::spec {

// The deepest legal kvsim document nests 7 levels: a catalogue's document, its scenarios
// array, a scenario, its requests, a request, its pin and the pin's decode_pages (a trace's
// inline scenario is one level less deep). Nine times that is still far from what the
// parser's recursion can hold.
inline constexpr std::size_t json_nesting_max = 64;

struct json_nesting_excess {
  std::size_t byte = 0;   // where the bracket that opens the level past the limit is
  std::size_t depth = 0;  // that level: the limit + 1
};

// The first '[' or '{' outside strings that opens a level deeper than `max`; empty when the
// text never nests deeper. One pass, no allocation: safe on any bytes, JSON or not.
std::optional<json_nesting_excess> json_nesting_exceeds(std::string_view text,
                                                        std::size_t max = json_nesting_max);

// "JSON nests deeper than 64 levels (the bracket at byte 120 opens level 65; no kvsim
// document nests deeper than 7)": the line a loader prints after its file name.
std::string describe(const json_nesting_excess& excess, std::size_t max = json_nesting_max);

// A value for an error line, at most `max_chars` characters and never recursing: scalars as
// compact JSON (a long string cut short), an array or object by its first level only, with
// nested containers as [...] and {...}. Cut text ends in "...".
inline constexpr std::size_t json_summary_chars = 60;
std::string json_summary(const nlohmann::json& value, std::size_t max_chars = json_summary_chars);

// nlohmann's exception text for an error line: without its "[json.exception.parse_error.101] "
// prefix, and with the token it quotes ("last read: '...'"), which can be a whole string of
// the file, cut short.
std::string json_error_detail(std::string_view what);

// Free text from outside (a key, a name) for an error line: escaped as spec::one_line does,
// at most `max_chars` characters, cut text ending in "...".
std::string shortened(std::string_view text, std::size_t max_chars = json_summary_chars);

}  // namespace kvsim::spec
