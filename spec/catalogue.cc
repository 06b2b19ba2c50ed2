#include "spec/catalogue.h"

#include <map>
#include <memory>
#include <optional>

#include "spec/json_reader.h"
#include "spec/scenario_parser.h"
#include "spec/strict_json.h"
#include "spec/capped_read.h"

namespace kvsim::scenarios {
namespace {

using detail::json;
using detail::json_reader;

std::string read_file(const std::filesystem::path& path, const json_reader& in) {
  try {
    return spec::read_capped(path, spec::catalogue_input);
  } catch (const spec::capped_read_error& e) {
    in.fail(e.what_problem() == spec::capped_read_error::problem::over_cap
                ? catalogue_problem::over_size_cap
                : catalogue_problem::unreadable_file,
            e.what());
  }
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
    case catalogue_problem::over_size_cap: return "over_size_cap";
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
