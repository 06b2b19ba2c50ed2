#include "real_backend/scripts/script_request.h"

#include <limits>
#include <optional>
#include <vector>

#include "real_backend/errors.h"

namespace kvsim::real {
namespace {

// The line as a refusal quotes it: at most 80 characters of it, a control character as \xNN
// (a line from the socketpair may hold any byte but a newline; a refusal is one line, and
// writes nothing to a terminal but text).
std::string shown_line(const std::string& line) {
  constexpr std::size_t shown_max = 80;
  const std::string cut = line.size() <= shown_max ? line : line.substr(0, shown_max - 3);
  std::string shown;
  for (const char c : cut) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      shown += c;
      continue;
    }
    constexpr char hex[] = "0123456789abcdef";
    shown += {'\\', 'x', hex[byte >> 4], hex[byte & 0xf]};
  }
  return cut.size() < line.size() ? shown + "..." : shown;
}

std::optional<std::uint64_t> decimal(const std::string& text, std::uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace

script_request parse_script_request(const std::string& line, served_script served) {
  const auto refuse = [&]() -> script_request {
    throw real_backend_error("the script sent '" + shown_line(line) + "'");
  };
  std::vector<std::string> words;
  for (std::size_t start = 0;;) {
    const std::size_t space = line.find(' ', start);
    words.push_back(line.substr(start, space == std::string::npos ? space : space - start));
    if (words.back().empty() || words.size() > 4) return refuse();
    if (space == std::string::npos) break;
    start = space + 1;
  }
  script_request request;
  request.verb = words[0];
  const std::string& verb = request.verb;
  const bool transfer = served == served_script::transfer;
  const bool stepped = transfer && (verb == "ask" || verb == "watch");
  const bool bare = verb == "findings" || verb == "events" || verb == "stop" ||
                    (transfer ? verb == "cancel" : verb == "connect" || verb == "run");
  if (!(stepped && words.size() == 4) && !(bare && words.size() == 2)) return refuse();
  const auto id = decimal(words[1], std::numeric_limits<std::uint64_t>::max());
  if (!id) return refuse();
  request.id = *id;
  if (stepped) {
    const std::optional<transfer_step> step = transfer_step_named(words[2]);
    const auto r = decimal(words[3], std::numeric_limits<std::uint32_t>::max());
    if (!step || !r) return refuse();
    request.step = *step;
    request.r = static_cast<std::size_t>(*r);
  }
  return request;
}

}  // namespace kvsim::real
