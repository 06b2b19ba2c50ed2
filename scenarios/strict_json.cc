#include "scenarios/strict_json.h"

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace kvsim::scenarios::detail {
namespace {

// Follows the parser's events to know the path of every container and the keys each object
// has shown so far.
class key_tracker {
 public:
  explicit key_tracker(const json_reader& in) : in_(in) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string path = child_path();
        frames_.push_back({event == json::parse_event_t::object_start, std::move(path), {}, {}, 0});
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!frames_.empty() && parsed.is_string()) {
          frame& object = frames_.back();
          object.key = parsed.get<std::string>();
          if (!object.keys.insert(object.key).second) {
            in_.fail(catalogue_problem::duplicate_key,
                     "field '" + member_path(object.path, object.key) +
                         "' appears twice in one object (JSON keys must be unique)");
          }
        }
        break;
      case json::parse_event_t::value:
        if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().next_index;
        break;
    }
    return true;
  }

 private:
  struct frame {
    bool is_object = false;
    std::string path;
    std::set<std::string> keys;
    std::string key;             // the key whose value comes next (objects)
    std::size_t next_index = 0;  // the index of the next element (arrays)
  };

  std::string child_path() {
    if (frames_.empty()) return "";
    frame& parent = frames_.back();
    if (parent.is_object) return member_path(parent.path, parent.key);
    return element_path(parent.path, parent.next_index++);
  }

  const json_reader& in_;
  std::vector<frame> frames_;
};

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string without_prefix(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    const auto end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return std::string(what);
}

}  // namespace

json parse_strict(std::string_view text, const json_reader& in) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    in.fail(catalogue_problem::malformed_json, "empty file, not a catalogue");
  }
  key_tracker keys(in);
  try {
    return json::parse(text.begin(), text.end(),
                       [&keys](int depth, json::parse_event_t event, json& parsed) {
                         return keys(depth, event, parsed);
                       });
  } catch (const json::parse_error& e) {
    in.fail(catalogue_problem::malformed_json, "malformed or truncated JSON at byte " +
                                                   std::to_string(e.byte) + " (" +
                                                   without_prefix(e.what()) + ")");
  } catch (const json::exception& e) {
    in.fail(catalogue_problem::malformed_json, "unreadable JSON (" + without_prefix(e.what()) + ")");
  }
}

}  // namespace kvsim::scenarios::detail
