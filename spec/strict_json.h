#pragma once
// JSON text to a document, strictly: malformed or truncated text is refused with the byte
// where parsing stopped, and so is an object that names one key twice (nlohmann keeps the
// last silently, which would let a pasted-over field pass unseen).
#include <string_view>

#include <nlohmann/json.hpp>

#include "spec/json_reader.h"

namespace kvsim::scenarios::detail {

// Errors go through `in` (its prefix names the file): malformed_json, duplicate_key.
nlohmann::json parse_strict(std::string_view text, const json_reader& in);

}  // namespace kvsim::scenarios::detail
