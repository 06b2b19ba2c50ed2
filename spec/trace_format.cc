#include "spec/trace_format.h"

namespace kvsim::spec {

std::string hex16(std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i) {
    text[static_cast<std::size_t>(i)] = digits[value & 0xf];
    value >>= 4;
  }
  return text;
}

std::string actor_label(std::uint32_t rank, std::string_view role, std::uint32_t index) {
  return "r" + std::to_string(rank) + "." + std::string(role) + "." + std::to_string(index);
}

std::string event_line_prefix(std::uint64_t step, std::uint64_t time_us, std::string_view actor) {
  return "step " + std::to_string(step) + " t=" + std::to_string(time_us) + "us " +
         std::string(actor) + " ";
}

}  // namespace kvsim::spec
