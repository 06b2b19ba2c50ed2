#pragma once
// The scenario catalogue: scenarios written as JSON (schema: scenarios/SCHEMA.md) and loaded
// into scenario_spec. A bad catalogue is refused with ONE line that names the file, the
// scenario (by name, or by index before its name is known) and the field path, e.g.
//   scenarios/catalogue.json: scenario 'page42': field 'topology.prefill_ranks' must be an
//   integer between 1 and 64 (got -1)
// Nothing is guessed: unknown fields, unknown names and out-of-range numbers are errors, and
// no nlohmann exception ever leaves these functions (only catalogue_error).
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/scenario_spec.h"

namespace kvsim::scenarios {

inline constexpr const char* catalogue_format = "kvsim-catalogue";
inline constexpr std::uint64_t catalogue_version = 1;

// What was wrong, for callers and tests that must tell the kinds apart.
enum class catalogue_problem : std::uint8_t {
  unreadable_file,  // missing, a directory, no permission, a read error
  over_size_cap,    // larger than spec::catalogue_input's cap (spec/input_caps.h): not read
  malformed_json,   // empty, truncated or not JSON at all (the message gives the byte)
  duplicate_key,    // one JSON object names the same key twice (the last would silently win)
  wrong_format,     // not an object, or "format" is not "kvsim-catalogue"
  newer_version,    // written for a newer catalogue format than this kvsim reads
  missing_field,    // a required field is absent
  wrong_type,       // e.g. a string where an integer belongs
  out_of_range,     // a number outside its range, or an index that names nothing valid
  unknown_value,    // a name outside its set: kind, abort phase, origin, variant, invariant...
  unknown_field,    // a key the schema does not have (a typo must not silently pass)
  invalid_text,     // a scenario name or description that breaks its rules
  duplicate_name,   // two scenarios share a name
  inconsistent,     // fields that contradict each other (e.g. prefetch_states vs the group)
};
const char* to_string(catalogue_problem problem);

class catalogue_error : public std::runtime_error {
 public:
  catalogue_error(catalogue_problem problem, const std::string& line)
      : std::runtime_error(line), problem_(problem) {}
  catalogue_problem problem() const noexcept { return problem_; }

 private:
  catalogue_problem problem_;
};

// One scenario object. `where` names its origin (a file, a trace) and starts every error
// line; the scenario is named by its "name" field once that has been read.
scenario_spec parse_scenario(const nlohmann::json& scenario, const std::string& where);

// A whole catalogue document, given as text; `where` starts every error line.
std::vector<scenario_spec> parse_catalogue(std::string_view text, const std::string& where);

// Reads and parses the catalogue file at `path`.
std::vector<scenario_spec> load_catalogue(const std::filesystem::path& path);

// The scenario as JSON in the catalogue's schema, every field written (empty optionals
// omitted): parse_scenario(to_json(s), ...) == s for every valid s.
nlohmann::json to_json(const scenario_spec& spec);

// A whole catalogue document: {"format", "version", "scenarios"}.
nlohmann::json catalogue_to_json(const std::vector<scenario_spec>& scenarios);

}  // namespace kvsim::scenarios
