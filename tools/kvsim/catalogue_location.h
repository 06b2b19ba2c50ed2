#pragma once
// Where kvsim finds its scenario catalogue when --catalogue does not say: an installed kvsim
// reads <prefix>/share/kvsim/catalogue.json next to its bin/; a build-tree kvsim reads the
// source tree's scenarios/catalogue.json (edits take effect without a rebuild); a binary
// copied anywhere else falls back to the copy built into it.
#include <filesystem>
#include <string_view>

namespace kvsim::tools {

// The name that stands for the built-in copy wherever a catalogue path goes.
inline constexpr std::string_view builtin_catalogue_name = "(built-in catalogue)";

// The first of: <dir of this executable>/../share/kvsim/catalogue.json, the source tree's
// catalogue this kvsim was built from, the built-in copy (builtin_catalogue_name).
std::filesystem::path default_catalogue();

// The catalogue text this kvsim was built with (scenarios/catalogue.json at build time).
std::string_view builtin_catalogue_text();

}  // namespace kvsim::tools
