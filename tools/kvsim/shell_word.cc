#include "tools/kvsim/shell_word.h"

namespace kvsim::tools {

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=+,") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace kvsim::tools
