#pragma once
// One NCCL rank: a communicator on one device with its own non-blocking stream and a device
// int64, for the collectives of core::collective (all_reduce MIN/MAX of one integer; the
// barrier is a one-integer all_reduce). A blocked collective is waited for by polling the
// stream, so that a deadline or a proof that a peer will never come (a wait_policy) can end
// the wait: the communicator is then aborted (ncclCommAbort) and the call throws.
//
// Communicators come from ncclCommInitAll (every device of this process in one clique, one
// host thread per rank afterwards) or ncclCommInitRank (one rank of a multi-process group,
// with the unique id that rank 0 made and sent over the control plane).
//
// Teardown (nccl_teardown.h): the members of a clique share whether one of them aborted; a
// survivor then aborts too instead of destroying, as does a communicator left with a
// collective unfinished or an asynchronous error, because ncclCommDestroy would wait for
// kernels that only an abort ends.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/ports.h"
#include "real_backend/data_plane.h"
#include "real_backend/nccl/nccl_teardown.h"

namespace kvsim::real {

inline constexpr std::size_t nccl_id_bytes = NCCL_UNIQUE_ID_BYTES;
using nccl_id_blob = std::array<std::uint8_t, nccl_id_bytes>;

class nccl_communicator {
 public:
  // One communicator per device, ranks in the order given.
  static std::vector<std::unique_ptr<nccl_communicator>> create_local(
      const std::vector<int>& devices);
  static std::unique_ptr<nccl_communicator> create_rank(int device, const nccl_id_blob& id,
                                                        int ranks, int rank);
  static nccl_id_blob new_unique_id();  // rank 0 makes it (ncclGetUniqueId)
  // One grouped all_reduce over every communicator of this process, waited for: NCCL loads
  // its kernels and connects its peers now, before any gate spins (see kernels.h).
  static void warm_up(const std::vector<std::unique_ptr<nccl_communicator>>& comms);
  // Ends every member of a clique: if any of them must abort, they all do (nccl_teardown.h).
  static void end_together(std::vector<std::unique_ptr<nccl_communicator>>& comms);

  ~nccl_communicator();
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  int device() const { return device_; }
  int ranks() const { return ranks_; }
  int rank() const { return rank_; }

  std::int64_t all_reduce(std::int64_t value, core::reduce_op op, const wait_policy& policy);
  void barrier(const wait_policy& policy) { (void)all_reduce(0, core::reduce_op::max, policy); }
  // Ends every operation of this communicator (a peer will never join); later calls throw.
  // The other members of its clique will abort too.
  void abort();
  nccl_comm_health health() const;

 private:
  nccl_communicator(int device, ncclComm_t comm, std::shared_ptr<nccl_clique> clique);
  void wait(const wait_policy& policy, const char* what);

  int device_;
  ncclComm_t comm_ = nullptr;
  int ranks_ = 0;
  int rank_ = 0;
  cudaStream_t stream_ = nullptr;
  std::int64_t* value_device_ = nullptr;  // [0] in, [1] out
  std::int64_t* value_host_ = nullptr;    // pinned
  bool aborted_ = false;
  bool collective_pending_ = false;  // enqueued, not yet seen to finish
  std::shared_ptr<nccl_clique> clique_;
};

}  // namespace kvsim::real
