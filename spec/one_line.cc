#include "spec/one_line.h"

#include <algorithm>

namespace kvsim::spec {
namespace {

// Appends `c` escaped; backslashes too when `escape_backslash` (a value's own text), not
// when the text is a line that may hold values escaped already.
void append_escaped(std::string& out, char c, bool escape_backslash) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto byte = static_cast<unsigned char>(c);
  if (c == '\n') {
    out += "\\n";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c == '\\' && escape_backslash) {
    out += "\\\\";
  } else if (byte < 0x20 || byte == 0x7f) {
    out += "\\x";
    out += hex[byte >> 4];
    out += hex[byte & 0xf];
  } else {
    out += c;
  }
}

// `text` escaped, cut once the output reaches `max_chars`: then it ends in "... (N bytes)".
// A cut never splits an escape, nor a UTF-8 character (its first bytes go too).
std::string escaped_and_cut(std::string_view text, std::size_t max_chars, bool escape_backslash) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars) + 32);
  std::size_t used = 0;
  for (; used < text.size() && out.size() < max_chars; ++used) {
    append_escaped(out, text[used], escape_backslash);
  }
  if (used == text.size()) return out;
  // Bytes from 0x80 up are copied one for one, so each popped byte is one of the text's.
  while (used > 0 && (static_cast<unsigned char>(text[used]) & 0xc0) == 0x80) {
    out.pop_back();
    --used;
  }
  return out + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) append_escaped(out, c, true);
  return out;
}

std::string echoed(std::string_view text, std::size_t max_chars) {
  return escaped_and_cut(text, max_chars, true);
}

std::string error_line(std::string_view line) {
  return escaped_and_cut(line, error_line_chars_max, false);
}

}  // namespace kvsim::spec
