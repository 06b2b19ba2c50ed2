#include "spec/fault_kinds.h"

namespace kvsim::spec {

std::optional<fault_kind> fault_kind_from_trace_name(std::string_view name) {
  for (const fault_kind_row& row : fault_kinds) {
    if (row.trace_name == name) return row.kind;
  }
  return std::nullopt;
}

std::optional<fault_kind> fault_kind_from_scenario_key(std::string_view key) {
  if (key.empty()) return std::nullopt;
  for (const fault_kind_row& row : fault_kinds) {
    if (row.scenario_key == key) return row.kind;
  }
  return std::nullopt;
}

}  // namespace kvsim::spec
