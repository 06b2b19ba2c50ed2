#include "spec/unique_keys.h"

#include <cstddef>
#include <set>
#include <vector>

#include "spec/untrusted_json.h"

namespace kvsim::spec {
namespace {

using nlohmann::json;

std::string member_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

// Follows the parser's events to know the keys each open object has shown so far, and the
// path of every open container for the error line. Each container keeps only its own name
// (its key in the parent, or its index) and its own keys, and the path is built only for an
// error: memory stays linear in the text, however deep it nests (a frame that copied its
// parent's whole path made it quadratic: 40 KB of nesting took 775 MB).
class key_tracker {
 public:
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
            throw duplicate_json_key("field '" + member_path(path_of_open(), shortened(object.key)) +
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
      path = f.named_by_index ? path + "[" + std::to_string(f.index) + "]"
                              : member_path(path, shortened(f.name));
    }
    constexpr std::size_t path_max = 4 * json_summary_chars;
    if (path.size() > path_max) path = "..." + path.substr(path.size() - (path_max - 3));
    return path;
  }

  std::vector<frame> frames_;
};

}  // namespace

json parse_with_unique_keys(std::string_view text) {
  key_tracker keys;
  return json::parse(text.begin(), text.end(),
                     [&keys](int depth, json::parse_event_t event, json& parsed) {
                       return keys(depth, event, parsed);
                     });
}

}  // namespace kvsim::spec
