#include "real_backend/cuda/cuda_data_plane.h"

#include "real_backend/cuda/cuda_gate.h"
#include "real_backend/cuda/cuda_page_pool.h"
#include "real_backend/cuda/cuda_storage.h"
#include "real_backend/cuda/cuda_transfer_engine.h"
#include "real_backend/cuda/devices.h"
#include "real_backend/errors.h"
#include "real_backend/nccl/nccl_comm.h"
#include "real_backend/plane_piece.h"

namespace kvsim::real {
namespace {

constexpr const char* cuda_plane_name = "the CUDA data plane";

// One NCCL rank per member, each on its own device: NCCL reduces across the devices.
class nccl_group_plane final : public group_plane {
 public:
  explicit nccl_group_plane(std::vector<std::unique_ptr<nccl_communicator>> comms)
      : comms_(std::move(comms)) {}
  ~nccl_group_plane() override { nccl_communicator::end_together(comms_); }
  nccl_group_plane(const nccl_group_plane&) = delete;
  nccl_group_plane& operator=(const nccl_group_plane&) = delete;
  bool across_devices() const override { return true; }
  std::int64_t reduce(std::uint32_t member, std::int64_t value, core::reduce_op op,
                      const wait_policy& policy) override {
    return comms_.at(member)->all_reduce(value, op, policy);
  }
  std::int64_t pass_through(std::int64_t, core::reduce_op, const wait_policy&) override {
    throw real_backend_error("pass_through on a group whose members have devices of their own");
  }

 private:
  std::vector<std::unique_ptr<nccl_communicator>> comms_;
};

// Members share one device: one NCCL rank carries the value the host agreed on.
class shared_device_group_plane final : public group_plane {
 public:
  explicit shared_device_group_plane(std::unique_ptr<nccl_communicator> comm)
      : comm_(std::move(comm)) {}
  bool across_devices() const override { return false; }
  std::int64_t reduce(std::uint32_t, std::int64_t, core::reduce_op, const wait_policy&) override {
    throw real_backend_error("reduce across devices on a group that shares one device");
  }
  std::int64_t pass_through(std::int64_t value, core::reduce_op op,
                            const wait_policy& policy) override {
    return comm_->all_reduce(value, op, policy);
  }

 private:
  std::unique_ptr<nccl_communicator> comm_;
};

}  // namespace

cuda_data_plane::cuda_data_plane(std::vector<int> devices) : devices_(std::move(devices)) {
  if (devices_.empty()) throw real_backend_error("the CUDA data plane needs at least one device");
}

std::string cuda_data_plane::device_of(std::uint32_t slot) const {
  const int device = cuda_device(slot);
  return "device " + std::to_string(device) + " (" + device_name(device) + ")";
}

std::unique_ptr<page_memory> cuda_data_plane::make_pages(std::uint32_t slot, std::uint32_t pages,
                                                         std::uint32_t page_bytes) {
  return std::make_unique<cuda_page_pool>(cuda_device(slot), pages, page_bytes);
}

std::unique_ptr<hold_gate> cuda_data_plane::make_gate() { return std::make_unique<cuda_gate>(); }

std::unique_ptr<gated_transfer_engine> cuda_data_plane::make_transfer_engine(
    core::rank_id rank, page_memory& source,
    const std::map<core::rank_id, page_memory*>& destinations) {
  return cuda_transfer_engine::over(rank, source, destinations, cuda_plane_name);
}

std::unique_ptr<host_page_memory> cuda_data_plane::make_host_pages(std::uint32_t,
                                                                   std::uint32_t pages,
                                                                   std::uint32_t page_bytes) {
  return std::make_unique<pinned_host_pages>(pages, page_bytes);
}

std::unique_ptr<gated_storage> cuda_data_plane::make_storage(std::uint32_t slot, core::rank_id rank,
                                                             host_page_memory& host) {
  return std::make_unique<cuda_storage>(
      cuda_device(slot), rank, piece_made_by<pinned_host_pages>(host, cuda_plane_name, "host pages"));
}

std::unique_ptr<group_plane> cuda_data_plane::make_group_plane(std::uint32_t members) {
  if (members >= 1 && members <= devices_.size()) {
    std::vector<int> group_devices(devices_.begin(), devices_.begin() + members);
    auto comms = nccl_communicator::create_local(group_devices);
    nccl_communicator::warm_up(comms);
    return std::make_unique<nccl_group_plane>(std::move(comms));
  }
  auto comms = nccl_communicator::create_local({devices_.front()});
  nccl_communicator::warm_up(comms);
  return std::make_unique<shared_device_group_plane>(std::move(comms.front()));
}

}  // namespace kvsim::real
