#include "scenarios/strict_json.h"

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "sim/untrusted_json.h"

namespace kvsim::scenarios::detail {
namespace {

// Follows the parser's events to know the keys each open object has shown so far, and the
// path of every open container for the error line. Each container keeps only its own name
// (its key in the parent, or its index) and its own keys, and the path is built only for an
// error: memory stays linear in the text, however deep it nests (a frame that copied its
// parent's whole path made it quadratic: 40 KB of nesting took 775 MB).
class key_tracker {
 public:
  explicit key_tracker(const json_reader& in) : in_(in) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        frames_.push_back(child_frame(event == json::parse_event_t::object_start));
        break;
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
                     "field '" + member_path(path_of_open(), sim::shortened(object.key)) +
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
    bool named_by_index = false;  // its parent is an array; false: a key, or the document
    std::string name;             // its key in the parent object ("" for the document)
    std::size_t index = 0;        // its index in the parent array
    std::set<std::string> keys;
    std::string key;              // the key whose value comes next (objects)
    std::size_t next_index = 0;   // the index of the next element (arrays)
  };

  frame child_frame(bool is_object) {
    frame child;
    child.is_object = is_object;
    if (frames_.empty()) return child;
    frame& parent = frames_.back();
    if (parent.is_object) {
      child.name = parent.key;
    } else {
      child.named_by_index = true;
      child.index = parent.next_index++;
    }
    return child;
  }

  // "scenarios[0].faults": the innermost open container, each key cut short, and a path
  // longer than four keys' worth cut from the front (its end says where the error is).
  std::string path_of_open() const {
    std::string path;
    for (std::size_t i = 1; i < frames_.size(); ++i) {
      const frame& f = frames_[i];
      path = f.named_by_index ? element_path(path, f.index)
                              : member_path(path, sim::shortened(f.name));
    }
    constexpr std::size_t path_max = 4 * sim::json_summary_chars;
    if (path.size() > path_max) path = "..." + path.substr(path.size() - (path_max - 3));
    return path;
  }

  const json_reader& in_;
  std::vector<frame> frames_;
};

}  // namespace

json parse_strict(std::string_view text, const json_reader& in) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    in.fail(catalogue_problem::malformed_json, "empty file, not a catalogue");
  }
  // Before the parser sees it: nlohmann recurses per level, and deep enough nesting
  // overflows the stack before any check of ours runs.
  if (const auto excess = sim::json_nesting_exceeds(text)) {
    in.fail(catalogue_problem::malformed_json, sim::describe(*excess));
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
                                                   sim::json_error_detail(e.what()) + ")");
  } catch (const json::exception& e) {
    in.fail(catalogue_problem::malformed_json,
            "unreadable JSON (" + sim::json_error_detail(e.what()) + ")");
  }
}

}  // namespace kvsim::scenarios::detail
