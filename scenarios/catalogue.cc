#include "scenarios/catalogue.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "scenarios/json_reader.h"
#include "scenarios/scenario_parser.h"
#include "scenarios/strict_json.h"

namespace kvsim::scenarios {
namespace {

using detail::json;
using detail::json_reader;

std::string read_file(const std::filesystem::path& path, const json_reader& in) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    in.fail(catalogue_problem::unreadable_file, "no such catalogue file");
  }
  if (status.type() == std::filesystem::file_type::directory) {
    in.fail(catalogue_problem::unreadable_file, "is a directory, not a catalogue file");
  }
  errno = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                            &std::fclose);
  if (!file) {
    in.fail(catalogue_problem::unreadable_file,
            std::string("cannot open catalogue: ") + std::strerror(errno));
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file.get());
    content.append(buffer, got);
    if (got < sizeof buffer) break;
  }
  if (std::ferror(file.get()) != 0) {
    in.fail(catalogue_problem::unreadable_file, "cannot read catalogue: read error");
  }
  return content;
}

void check_header(const json& document, const json_reader& in) {
  if (!document.is_object()) {
    in.fail(catalogue_problem::wrong_format, std::string("not a kvsim catalogue (the JSON is ") +
                                                 document.type_name() + ", not an object)");
  }
  const auto format = document.find("format");
  if (format == document.end()) {
    in.fail(catalogue_problem::wrong_format, "not a kvsim catalogue (no field 'format')");
  }
  if (!format->is_string() || *format != catalogue_format) {
    in.fail(catalogue_problem::wrong_format,
            "not a kvsim catalogue (field 'format' is " + detail::shown(*format) + ", expected \"" +
                catalogue_format + "\")");
  }
  const std::uint64_t version = in.u64(in.required(document, "", "version"), "version", 1);
  if (version > catalogue_version) {
    in.fail(catalogue_problem::newer_version,
            "catalogue format version " + std::to_string(version) +
                " is newer than this kvsim reads (" + std::to_string(catalogue_version) + ")");
  }
  in.only_keys(document, "", {"format", "version", "scenarios"});
}

std::vector<scenario_spec> scenarios_of(const json& document, const std::string& where,
                                        const json_reader& in) {
  const json& list = in.array(in.required(document, "", "scenarios"), "scenarios");
  std::vector<scenario_spec> scenarios;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    scenario_spec spec = detail::parse_scenario_at(list[i], where, i);
    const auto [it, fresh] = seen.emplace(spec.name, i);
    if (!fresh) {
      json_reader(where + ": " + detail::scenario_label(spec.name))
          .fail_field(catalogue_problem::duplicate_name, detail::element_path("scenarios", i) + ".name",
                      "repeats the name of scenarios[" + std::to_string(it->second) + "]");
    }
    scenarios.push_back(std::move(spec));
  }
  return scenarios;
}

}  // namespace

const char* to_string(catalogue_problem problem) {
  switch (problem) {
    case catalogue_problem::unreadable_file: return "unreadable_file";
    case catalogue_problem::malformed_json: return "malformed_json";
    case catalogue_problem::duplicate_key: return "duplicate_key";
    case catalogue_problem::wrong_format: return "wrong_format";
    case catalogue_problem::newer_version: return "newer_version";
    case catalogue_problem::missing_field: return "missing_field";
    case catalogue_problem::wrong_type: return "wrong_type";
    case catalogue_problem::out_of_range: return "out_of_range";
    case catalogue_problem::unknown_value: return "unknown_value";
    case catalogue_problem::unknown_field: return "unknown_field";
    case catalogue_problem::invalid_text: return "invalid_text";
    case catalogue_problem::duplicate_name: return "duplicate_name";
    case catalogue_problem::inconsistent: return "inconsistent";
  }
  return "unknown";
}

std::vector<scenario_spec> parse_catalogue(std::string_view text, const std::string& where) {
  const json_reader in(where);
  try {
    const json document = detail::parse_strict(text, in);
    check_header(document, in);
    return scenarios_of(document, where, in);
  } catch (const json::exception& e) {  // a safety net: the checks should see everything
    in.fail(catalogue_problem::wrong_type, std::string("unexpected JSON error: ") + e.what());
  }
}

std::vector<scenario_spec> load_catalogue(const std::filesystem::path& path) {
  const std::string where = path.string();
  return parse_catalogue(read_file(path, json_reader(where)), where);
}

}  // namespace kvsim::scenarios
