#include "real_backend/nccl/nccl_teardown.h"

namespace kvsim::real {

nccl_end how_to_end(const nccl_comm_health& health) {
  if (health.aborted) return nccl_end::nothing;
  if (health.clique_aborted || health.collective_pending || health.async_error) {
    return nccl_end::abort;
  }
  return nccl_end::destroy;
}

}  // namespace kvsim::real
