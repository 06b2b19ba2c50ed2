#include "core/kv_status.h"

namespace kvsim::core {

const char* to_string(kv_status status) {
  switch (status) {
    case kv_status::failed:
      return "Failed";
    case kv_status::bootstrapping:
      return "Bootstrapping";
    case kv_status::waiting_for_input:
      return "WaitingForInput";
    case kv_status::transferring:
      return "Transferring";
    case kv_status::success:
      return "Success";
  }
  return "UnknownStatus";
}

}  // namespace kvsim::core
