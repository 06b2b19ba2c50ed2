#include "spec/json_reader.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "spec/one_line.h"
#include "spec/untrusted_json.h"

namespace kvsim::scenarios::detail {
namespace {

constexpr std::size_t shown_max = spec::json_summary_chars;

// Edits (insert, delete, replace) between a and b: how near a typo is to a real key.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string quoted_list(std::span<const char* const> names) {
  std::string text;
  for (const char* name : names) {
    if (!text.empty()) text += ", ";
    text += "'";
    text += name;
    text += "'";
  }
  return text;
}

}  // namespace

std::string member_path(const std::string& parent, std::string_view key) {
  std::string path = parent;
  if (!path.empty()) path += ".";
  path += key;
  return path;
}

std::string element_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string shown(const json& value) { return spec::json_summary(value, shown_max); }

// The line stays one line: control characters (from file names, keys) print escaped.
void json_reader::fail(catalogue_problem problem, const std::string& text) const {
  throw catalogue_error(problem, spec::error_line(prefix_ + ": " + text));
}

void json_reader::fail_field(catalogue_problem problem, const std::string& path,
                             const std::string& text) const {
  fail(problem, "field '" + path + "' " + text);
}

const json& json_reader::object(const json& value, const std::string& path) const {
  if (!value.is_object()) {
    fail_field(catalogue_problem::wrong_type, path, "must be an object (got " + shown(value) + ")");
  }
  return value;
}

const json& json_reader::array(const json& value, const std::string& path) const {
  if (!value.is_array()) {
    fail_field(catalogue_problem::wrong_type, path, "must be an array (got " + shown(value) + ")");
  }
  return value;
}

void json_reader::only_keys(const json& object, const std::string& path,
                            std::span<const std::string_view> allowed) const {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string text = "unknown field '" + member_path(path, spec::shortened(key)) + "'";
    std::string_view nearest;
    std::size_t best = std::numeric_limits<std::size_t>::max();
    for (const std::string_view candidate : allowed) {
      const std::size_t distance = edit_distance(key, candidate);
      if (distance < best) {
        best = distance;
        nearest = candidate;
      }
    }
    if (best <= 2 && best < key.size()) {
      text += " (did you mean '" + member_path(path, nearest) + "'?)";
    }
    fail(catalogue_problem::unknown_field, text);
  }
}

const json& json_reader::required(const json& object, const std::string& path,
                                  const char* key) const {
  const auto it = object.find(key);
  if (it == object.end()) {
    fail(catalogue_problem::missing_field, "missing required field '" + member_path(path, key) + "'");
  }
  return *it;
}

const json* json_reader::optional(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::uint64_t json_reader::integer(const json& value, const std::string& path, std::uint64_t min,
                                   std::uint64_t max) const {
  // A bound that is only the width of the C++ type goes unsaid unless the value passes it.
  const bool open_ended = max == std::numeric_limits<std::uint64_t>::max() ||
                          max == std::numeric_limits<std::uint32_t>::max();
  const std::string bounded = "between " + std::to_string(min) + " and " + std::to_string(max);
  std::string range = open_ended ? ">= " + std::to_string(min) : bounded;
  const auto got = [&] { return " (got " + shown(value) + ")"; };
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number > max) range = bounded;
    if (number < min || number > max) {
      fail_field(catalogue_problem::out_of_range, path, "must be an integer " + range + got());
    }
    return number;
  }
  fail_field(value.is_number_integer() ? catalogue_problem::out_of_range
                                       : catalogue_problem::wrong_type,
             path, "must be an integer " + range + got());
}

std::uint32_t json_reader::u32(const json& value, const std::string& path,
                               std::uint32_t min) const {
  return static_cast<std::uint32_t>(
      integer(value, path, min, std::numeric_limits<std::uint32_t>::max()));
}

std::uint64_t json_reader::u64(const json& value, const std::string& path,
                               std::uint64_t min) const {
  return integer(value, path, min, std::numeric_limits<std::uint64_t>::max());
}

bool json_reader::boolean(const json& value, const std::string& path) const {
  if (!value.is_boolean()) {
    fail_field(catalogue_problem::wrong_type, path,
               "must be true or false (got " + shown(value) + ")");
  }
  return value.get<bool>();
}

const std::string& json_reader::string(const json& value, const std::string& path) const {
  if (!value.is_string()) {
    fail_field(catalogue_problem::wrong_type, path, "must be a string (got " + shown(value) + ")");
  }
  return value.get_ref<const std::string&>();
}

std::size_t json_reader::one_of(const json& value, const std::string& path,
                                std::span<const char* const> names) const {
  const std::string text = "must be one of " + quoted_list(names) + " (got " + shown(value) + ")";
  if (!value.is_string()) fail_field(catalogue_problem::wrong_type, path, text);
  const auto& name = value.get_ref<const std::string&>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return i;
  }
  fail_field(catalogue_problem::unknown_value, path, text);
}

}  // namespace kvsim::scenarios::detail
