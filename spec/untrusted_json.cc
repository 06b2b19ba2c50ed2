#include "spec/untrusted_json.h"

#include "spec/one_line.h"

namespace kvsim::spec {
namespace {

using nlohmann::json;

constexpr std::string_view ellipsis = "...";
// The deepest legal document, as json_nesting_max's comment counts it.
constexpr std::size_t deepest_legal_document = 7;

std::string compact(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// `text` cut to `max_chars`, its last three characters then "..." when it was longer.
std::string cut(std::string text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  if (max_chars <= ellipsis.size()) return std::string(ellipsis.substr(0, max_chars));
  text.resize(max_chars - ellipsis.size());
  return text + std::string(ellipsis);
}

// A scalar, or a container by its shape alone: never more than about `max_chars` characters
// are produced, whatever the value holds (a string is cut before it is escaped).
std::string element(const json& value, std::size_t max_chars) {
  if (value.is_array()) return value.empty() ? "[]" : "[...]";
  if (value.is_object()) return value.empty() ? "{}" : "{...}";
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() <= max_chars) return compact(value);
    return compact(json(text.substr(0, max_chars))) + std::string(ellipsis);
  }
  return compact(value);
}

}  // namespace

std::optional<json_nesting_excess> json_nesting_exceeds(std::string_view text, std::size_t max) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return json_nesting_excess{i, depth};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;  // an unbalanced close is the parser's to refuse, with its byte
    }
  }
  return std::nullopt;
}

std::string describe(const json_nesting_excess& excess, std::size_t max) {
  return "JSON nests deeper than " + std::to_string(max) + " levels (the bracket at byte " +
         std::to_string(excess.byte) + " opens level " + std::to_string(excess.depth) +
         "; no kvsim document nests deeper than " + std::to_string(deepest_legal_document) + ")";
}

std::string json_summary(const json& value, std::size_t max_chars) {
  if (!value.is_array() && !value.is_object()) return cut(element(value, max_chars), max_chars);
  if (value.empty()) return value.is_array() ? "[]" : "{}";
  const bool is_object = value.is_object();
  std::string text = is_object ? "{" : "[";
  bool first = true;
  for (auto it = value.begin(); it != value.end() && text.size() <= max_chars; ++it) {
    if (!first) text += ",";
    first = false;
    if (is_object) {
      text += element(json(shortened(it.key(), max_chars)), max_chars);
      text += ":";
    }
    text += element(it.value(), max_chars);
  }
  text += is_object ? "}" : "]";
  return cut(std::move(text), max_chars);
}

std::string json_error_detail(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    const auto end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  constexpr std::string_view quoted = "last read: '";
  const auto token = what.find(quoted);
  if (token == std::string_view::npos) return shortened(what, 4 * json_summary_chars);
  const std::size_t from = token + quoted.size();
  const std::size_t to = what.rfind('\'');
  const std::string_view read = what.substr(from, to > from ? to - from : std::string_view::npos);
  return shortened(what.substr(0, from), 4 * json_summary_chars) + shortened(read) + "'";
}

std::string shortened(std::string_view text, std::size_t max_chars) {
  return cut(one_line(text.substr(0, max_chars + 1)), max_chars);
}

}  // namespace kvsim::spec
