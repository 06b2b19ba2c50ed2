#pragma once
// The command line of one kvsim subcommand: its flags (each with or without a value) and its
// positional arguments, read strictly. Anything unknown, missing or repeated is a usage_error
// whose text is the one line main() prints after "kvsim <command>: ".
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsim::tools {

// Bad flags or values: exit 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input files (catalogue, trace) or unknown names: exit 2 as well, a different wording.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct flag_spec {
  std::string name;  // "--seed"
  bool takes_value = false;
};

class cli_args {
 public:
  // Parses `args` (everything after the subcommand) against `flags` ("--name" or "-o"); at
  // most `max_positionals` arguments that are not flags.
  cli_args(const std::vector<std::string>& args, const std::vector<flag_spec>& flags,
           std::size_t max_positionals = 0);

  bool has(const std::string& flag) const { return values_.contains(flag); }
  std::optional<std::string> value(const std::string& flag) const;
  std::string value_or(const std::string& flag, const std::string& fallback) const;
  // An unsigned integer value in [min, max], or `fallback` when the flag is absent.
  std::uint64_t number_or(const std::string& flag, std::uint64_t fallback, std::uint64_t min = 0,
                          std::uint64_t max = UINT64_MAX) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positionals_;
};

// "123" -> 123; anything else (sign, spaces, overflow, empty) is a usage_error naming `what`.
std::uint64_t parse_unsigned(const std::string& text, const std::string& what);

}  // namespace kvsim::tools
