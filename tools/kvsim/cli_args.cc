#include "tools/kvsim/cli_args.h"

#include <algorithm>

namespace kvsim::tools {

std::uint64_t parse_unsigned(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 20 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw usage_error(what + " must be a non-negative integer (got '" + text + "')");
  }
  std::uint64_t value = 0;
  for (const char c : text) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) throw usage_error(what + " is too large (got '" + text + "')");
    value = value * 10 + digit;
  }
  return value;
}

cli_args::cli_args(const std::vector<std::string>& args, const std::vector<flag_spec>& flags,
                   std::size_t max_positionals) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool short_flag = arg.size() == 2 && arg[0] == '-' && arg[1] != '-';
    if ((arg.rfind("--", 0) != 0 || arg == "--") && !short_flag) {
      if (positionals_.size() == max_positionals) {
        throw usage_error(max_positionals == 0 ? "unexpected argument '" + arg + "'"
                                               : "too many arguments ('" + arg + "')");
      }
      positionals_.push_back(arg);
      continue;
    }
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const auto spec = std::find_if(flags.begin(), flags.end(),
                                   [&](const flag_spec& f) { return f.name == name; });
    if (spec == flags.end()) throw usage_error("unknown flag '" + name + "'");
    if (values_.contains(name)) throw usage_error("flag '" + name + "' given twice");
    if (!spec->takes_value) {
      if (inline_value) throw usage_error("flag '" + name + "' takes no value");
      values_[name] = "";
      continue;
    }
    if (inline_value) {
      values_[name] = *inline_value;
      continue;
    }
    if (i + 1 >= args.size()) throw usage_error("flag '" + name + "' needs a value");
    values_[name] = args[++i];
  }
}

std::optional<std::string> cli_args::value(const std::string& flag) const {
  const auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string cli_args::value_or(const std::string& flag, const std::string& fallback) const {
  return value(flag).value_or(fallback);
}

std::uint64_t cli_args::number_or(const std::string& flag, std::uint64_t fallback,
                                  std::uint64_t min, std::uint64_t max) const {
  const auto text = value(flag);
  if (!text) return fallback;
  const std::uint64_t number = parse_unsigned(*text, flag);
  if (number < min || number > max) {
    throw usage_error(flag + " must be between " + std::to_string(min) + " and " +
                      std::to_string(max) + " (got " + *text + ")");
  }
  return number;
}

}  // namespace kvsim::tools
