#pragma once
// Reading catalogue JSON with one-line errors. Every accessor names its value by a field
// path ("requests[1].pages", "faults.gates[0].before_page") and throws catalogue_error,
// prefixed with where the value comes from ("file: scenario 'page42'").
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "spec/catalogue.h"

namespace kvsim::scenarios::detail {

using nlohmann::json;

// "topology" + "pages" -> "topology.pages"; "" + "name" -> "name".
std::string member_path(const std::string& parent, std::string_view key);
// "requests" + 2 -> "requests[2]".
std::string element_path(const std::string& parent, std::size_t index);
// The value as compact one-line JSON, cut short when long: what "(got ...)" shows.
std::string shown(const json& value);

class json_reader {
 public:
  explicit json_reader(std::string prefix) : prefix_(std::move(prefix)) {}
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }

  // "<prefix>: <text>".
  [[noreturn]] void fail(catalogue_problem problem, const std::string& text) const;
  // "<prefix>: field '<path>' <text>".
  [[noreturn]] void fail_field(catalogue_problem problem, const std::string& path,
                               const std::string& text) const;

  const json& object(const json& value, const std::string& path) const;
  const json& array(const json& value, const std::string& path) const;
  // Every key of `object` (at `path`) is one of `allowed`; else "unknown field 'path.key'",
  // with a suggestion when the key is a near miss.
  void only_keys(const json& object, const std::string& path,
                 std::span<const std::string_view> allowed) const;
  void only_keys(const json& object, const std::string& path,
                 std::initializer_list<std::string_view> allowed) const {
    only_keys(object, path, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  const json& required(const json& object, const std::string& path, const char* key) const;
  static const json* optional(const json& object, const char* key);

  // An integer in [min, max]: a non-integer is wrong_type, an integer outside out_of_range.
  std::uint64_t integer(const json& value, const std::string& path, std::uint64_t min,
                        std::uint64_t max) const;
  std::uint32_t u32(const json& value, const std::string& path, std::uint32_t min) const;
  std::uint64_t u64(const json& value, const std::string& path, std::uint64_t min) const;
  bool boolean(const json& value, const std::string& path) const;
  const std::string& string(const json& value, const std::string& path) const;
  // The index of the string among `names`; else unknown_value listing them.
  std::size_t one_of(const json& value, const std::string& path,
                     std::span<const char* const> names) const;

 private:
  std::string prefix_;
};

}  // namespace kvsim::scenarios::detail
