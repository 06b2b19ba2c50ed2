#include "real_backend/nccl/nccl_comm.h"

#include <cstring>
#include <string>
#include <thread>

#include "real_backend/cuda/cuda_check.h"

namespace kvsim::real {

std::vector<std::unique_ptr<nccl_communicator>> nccl_communicator::create_local(
    const std::vector<int>& devices) {
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  // ncclCommInitAll: a single-process clique, one rank per listed device (NCCL API,
  // "Communicator Creation and Management Functions").
  KVSIM_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  // One clique in NCCL's sense too: commReclaim frees them together (nccl_teardown.h).
  const auto clique = std::make_shared<nccl_clique>();
  std::vector<std::unique_ptr<nccl_communicator>> made;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    made.push_back(
        std::unique_ptr<nccl_communicator>(new nccl_communicator(devices[i], comms[i], clique)));
  }
  return made;
}

std::unique_ptr<nccl_communicator> nccl_communicator::create_rank(int device,
                                                                  const nccl_id_blob& id, int ranks,
                                                                  int rank) {
  ncclUniqueId unique{};
  static_assert(sizeof(unique.internal) == nccl_id_bytes, "NCCL unique id size");
  std::memcpy(unique.internal, id.data(), nccl_id_bytes);
  KVSIM_CUDA_CHECK(cudaSetDevice(device));
  ncclComm_t comm = nullptr;
  KVSIM_NCCL_CHECK(ncclCommInitRank(&comm, ranks, unique, rank));
  // Its clique in this process is itself; peers in other processes abort on their own.
  return std::unique_ptr<nccl_communicator>(
      new nccl_communicator(device, comm, std::make_shared<nccl_clique>()));
}

nccl_id_blob nccl_communicator::new_unique_id() {
  ncclUniqueId unique{};
  KVSIM_NCCL_CHECK(ncclGetUniqueId(&unique));
  nccl_id_blob id{};
  std::memcpy(id.data(), unique.internal, nccl_id_bytes);
  return id;
}

void nccl_communicator::warm_up(const std::vector<std::unique_ptr<nccl_communicator>>& comms) {
  // One thread drives every rank of the clique: the calls must be grouped (NCCL API, "Group
  // Calls": one thread managing several devices).
  KVSIM_NCCL_CHECK(ncclGroupStart());
  for (const auto& c : comms) {
    KVSIM_CUDA_CHECK(cudaSetDevice(c->device_));
    c->collective_pending_ = true;
    KVSIM_NCCL_CHECK(ncclAllReduce(c->value_device_, c->value_device_ + 1, 1, ncclInt64, ncclMax,
                                   c->comm_, c->stream_));
  }
  KVSIM_NCCL_CHECK(ncclGroupEnd());
  const wait_policy policy{std::chrono::steady_clock::now() + std::chrono::seconds(60), {}};
  for (const auto& c : comms) c->wait(policy, "warm-up all_reduce");
}

void nccl_communicator::end_together(std::vector<std::unique_ptr<nccl_communicator>>& comms) {
  // Decided for all before any ends: a member destroyed first would otherwise miss that a
  // later one has to abort (the clique's last call syncs every member's streams).
  for (const auto& c : comms) {
    if (c != nullptr && how_to_end(c->health()) == nccl_end::abort) c->clique_->member_aborted();
  }
  comms.clear();
}

nccl_communicator::nccl_communicator(int device, ncclComm_t comm,
                                     std::shared_ptr<nccl_clique> clique)
    : device_(device), comm_(comm), clique_(std::move(clique)) {
  KVSIM_NCCL_CHECK(ncclCommCount(comm_, &ranks_));
  KVSIM_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  KVSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  KVSIM_CUDA_CHECK(cudaMalloc(&value_device_, 2 * sizeof(std::int64_t)));
  KVSIM_CUDA_CHECK(cudaMallocHost(&value_host_, 2 * sizeof(std::int64_t)));
  KVSIM_CUDA_CHECK(cudaMemsetAsync(value_device_, 0, 2 * sizeof(std::int64_t), stream_));
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

nccl_communicator::~nccl_communicator() {
  KVSIM_CUDA_WARN(cudaSetDevice(device_));
  if (comm_ != nullptr) {
    switch (how_to_end(health())) {
      case nccl_end::nothing: break;  // ncclCommAbort freed it
      case nccl_end::abort: abort(); break;
      case nccl_end::destroy: (void)ncclCommDestroy(comm_); break;
    }
  }
  if (stream_ != nullptr) {
    KVSIM_CUDA_WARN(cudaStreamSynchronize(stream_));
    KVSIM_CUDA_WARN(cudaStreamDestroy(stream_));
  }
  if (value_host_ != nullptr) KVSIM_CUDA_WARN(cudaFreeHost(value_host_));
  if (value_device_ != nullptr) KVSIM_CUDA_WARN(cudaFree(value_device_));
}

void nccl_communicator::abort() {
  if (aborted_) return;
  aborted_ = true;
  clique_->member_aborted();
  // ncclCommAbort frees the communicator and stops its kernels (NCCL API, "ncclCommAbort").
  (void)ncclCommAbort(comm_);
}

nccl_comm_health nccl_communicator::health() const {
  nccl_comm_health h;
  h.aborted = aborted_;
  h.collective_pending = collective_pending_;
  h.clique_aborted = clique_->any_aborted();
  if (!aborted_ && comm_ != nullptr) {
    ncclResult_t async = ncclSuccess;
    // A failed query counts as an error: aborting never waits, destroying might.
    h.async_error = ncclCommGetAsyncError(comm_, &async) != ncclSuccess ||
                    (async != ncclSuccess && async != ncclInProgress);
  }
  return h;
}

void nccl_communicator::wait(const wait_policy& policy, const char* what) {
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) {
      collective_pending_ = false;
      return;
    }
    if (status != cudaErrorNotReady) KVSIM_CUDA_CHECK(status);
    ncclResult_t async = ncclSuccess;
    KVSIM_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    if (async != ncclSuccess && async != ncclInProgress) KVSIM_NCCL_CHECK(async);
    if (policy.give_up) {
      if (const std::optional<std::string> finding = policy.give_up()) {
        abort();
        throw collective_divergence(*finding);
      }
    }
    if (!policy.give_up && clique_->any_aborted()) {
      // Nobody else can end this wait (with a give_up, the group's own rule sees the same
      // failure and names it): the peer it waits for is gone.
      abort();
      throw real_backend_error(std::string("NCCL ") + what + " on device " +
                               std::to_string(device_) + ": another member of its clique aborted");
    }
    if (std::chrono::steady_clock::now() >= policy.deadline) {
      abort();
      throw real_backend_error(std::string("NCCL ") + what + " on device " +
                               std::to_string(device_) + " (rank " + std::to_string(rank_) +
                               " of " + std::to_string(ranks_) + ") passed its deadline");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::int64_t nccl_communicator::all_reduce(std::int64_t value, core::reduce_op op,
                                           const wait_policy& policy) {
  if (aborted_)
    throw real_backend_error("NCCL communicator on device " + std::to_string(device_) +
                             " was aborted");
  KVSIM_CUDA_CHECK(cudaSetDevice(device_));
  value_host_[0] = value;
  collective_pending_ = true;
  KVSIM_CUDA_CHECK(cudaMemcpyAsync(value_device_, value_host_, sizeof(std::int64_t),
                                   cudaMemcpyHostToDevice, stream_));
  KVSIM_NCCL_CHECK(ncclAllReduce(value_device_, value_device_ + 1, 1, ncclInt64,
                                 op == core::reduce_op::min ? ncclMin : ncclMax, comm_, stream_));
  KVSIM_CUDA_CHECK(cudaMemcpyAsync(value_host_ + 1, value_device_ + 1, sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream_));
  wait(policy, op == core::reduce_op::min ? "all_reduce(MIN)" : "all_reduce(MAX)");
  return value_host_[1];
}

}  // namespace kvsim::real
