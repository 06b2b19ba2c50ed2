#pragma once
// Text that comes from outside (scenario names, fault descriptions, file paths, JSON error
// details) must not break a one-line promise (one event per line, one error line per
// failure): control characters and backslashes are printed escaped (\n, \t, \\, \xHH).
#include <string>
#include <string_view>

namespace kvsim::sim {

std::string one_line(std::string_view text);

}  // namespace kvsim::sim
