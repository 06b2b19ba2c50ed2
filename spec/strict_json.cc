#include "spec/strict_json.h"

#include <string>

#include "spec/unique_keys.h"
#include "spec/untrusted_json.h"

namespace kvsim::scenarios::detail {

json parse_strict(std::string_view text, const json_reader& in) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    in.fail(catalogue_problem::malformed_json, "empty file, not a catalogue");
  }
  // Before the parser sees it: nlohmann recurses per level, and deep enough nesting
  // overflows the stack before any check of ours runs.
  if (const auto excess = spec::json_nesting_exceeds(text)) {
    in.fail(catalogue_problem::malformed_json, spec::describe(*excess));
  }
  try {
    return spec::parse_with_unique_keys(text);
  } catch (const spec::duplicate_json_key& e) {
    in.fail(catalogue_problem::duplicate_key, e.what());
  } catch (const json::parse_error& e) {
    in.fail(catalogue_problem::malformed_json, "malformed or truncated JSON at byte " +
                                                   std::to_string(e.byte) + " (" +
                                                   spec::json_error_detail(e.what()) + ")");
  } catch (const json::exception& e) {
    in.fail(catalogue_problem::malformed_json,
            "unreadable JSON (" + spec::json_error_detail(e.what()) + ")");
  }
}

}  // namespace kvsim::scenarios::detail
