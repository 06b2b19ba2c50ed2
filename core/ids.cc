#include "core/ids.h"

namespace kvsim::core {

std::string to_string(const room_key& key) {
  return "room " + std::to_string(key.room) + "/gen " + std::to_string(key.generation);
}

std::string pages_text(std::span<const page_index> pages) {
  std::string text = "[";
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (i != 0) text += ",";
    text += std::to_string(pages[i]);
  }
  return text + "]";
}

const char* to_string(lease_role role) {
  switch (role) {
    case lease_role::source:
      return "source";
    case lease_role::destination:
      return "destination";
  }
  return "unknown-role";
}

}  // namespace kvsim::core
