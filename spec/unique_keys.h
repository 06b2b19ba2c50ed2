#pragma once
// JSON text to a document, refusing an object that names one key twice: nlohmann keeps the
// last silently, which would let a pasted-over field of a trace, a catalogue or a shard's
// rows pass unseen. Every input kvsim reads is parsed through here.
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvsim::spec {

// what(): "field 'finding.message' appears twice in one object (JSON keys must be unique)";
// the path names the key where it is (each key cut short, a long path cut from the front).
class duplicate_json_key : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws nlohmann's parse errors as they are, and duplicate_json_key. Nesting is the
// caller's to check first (spec/untrusted_json.h): the parser recurses per level.
nlohmann::json parse_with_unique_keys(std::string_view text);

}  // namespace kvsim::spec
