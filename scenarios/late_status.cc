#include "scenarios/late_status.h"

namespace kvsim::scenarios {

std::vector<core::kv_status> late_statuses(std::optional<core::kv_status> now, bool seen) {
  using core::kv_status;
  if (!now) {
    if (seen) return {kv_status::failed};  // erased: a late failure
    return {};
  }
  switch (*now) {
    case kv_status::failed:
    case kv_status::success:
      return {kv_status::failed, kv_status::bootstrapping, kv_status::waiting_for_input,
              kv_status::transferring, kv_status::success};
    case kv_status::transferring:
      return {kv_status::bootstrapping, kv_status::waiting_for_input, kv_status::transferring};
    case kv_status::waiting_for_input:
      return {kv_status::bootstrapping, kv_status::waiting_for_input};
    case kv_status::bootstrapping:
      return {kv_status::bootstrapping};
  }
  return {};
}

}  // namespace kvsim::scenarios
