#pragma once
// How long a wait lasted, as error lines say it: "20 s", "0.3 s", "2.25 s".
#include <chrono>
#include <string>

namespace kvsim::real {

inline std::string seconds_text(std::chrono::milliseconds wait) {
  const auto ms = wait.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  std::string fraction = std::to_string(ms / 100 % 10);
  if (ms % 100 != 0) fraction += std::to_string(ms / 10 % 10);
  if (ms % 10 != 0) fraction += std::to_string(ms % 10);
  return std::to_string(ms / 1000) + "." + fraction + " s";
}

}  // namespace kvsim::real
