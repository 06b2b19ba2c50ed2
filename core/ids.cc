#include "core/ids.h"

namespace kvsim::core {

std::string to_string(const room_key& key) {
  return "room " + std::to_string(key.room) + "/gen " + std::to_string(key.generation);
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
