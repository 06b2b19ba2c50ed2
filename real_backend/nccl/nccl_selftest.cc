#include "real_backend/nccl/nccl_selftest.h"

#include <chrono>
#include <string>

#include "real_backend/cuda/devices.h"
#include "real_backend/errors.h"
#include "real_backend/wire/id_exchange.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/nccl/nccl_comm.h"
#include "real_backend/wire/run_secret.h"

namespace kvsim::real {
namespace {

constexpr std::chrono::seconds rendezvous_timeout{120};  // ranks of a job start minutes apart
constexpr std::chrono::seconds collective_timeout{60};

}  // namespace

int run_nccl_check(std::ostream& out, std::ostream& err, const std::optional<std::string>& key_file,
                   const environment& env) {
  launch_config config;
  std::optional<link_key> key;  // only a launch of several ranks has links to authenticate
  try {
    config = parse_launch_environment(env);
    if (config.world_size > 1 || key_file) {  // a key file given is checked, used or not
      key = derive_link_key(resolve_run_secret(config, env, key_file));
    }
  } catch (const launch_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  }
  const device_probe probe = probe_devices();
  if (probe.count == 0) {
    err << "kvsim real: no CUDA device found (" << probe.error << ")\n";
    return 2;
  }
  if (config.local_rank >= static_cast<std::uint32_t>(probe.count)) {
    err << "kvsim real: local rank " << config.local_rank << " has no device (this node has "
        << probe.count << ")\n";
    return 2;
  }
  try {
    const int device = static_cast<int>(config.local_rank);
    nccl_id_blob id{};
    if (config.rank == 0) {
      id = nccl_communicator::new_unique_id();
      if (config.world_size > 1) {
        // Every interface: MASTER_ADDR names this node, maybe by a hostname.
        id_server server("0.0.0.0", config.rendezvous_port, *key);
        server.serve(id, config.world_size - 1, rendezvous_timeout);
      }
    } else {
      id = fetch_id(config.master_addr, config.rendezvous_port, config.rank, *key,
                    rendezvous_timeout);
    }
    auto comm = nccl_communicator::create_rank(device, id, static_cast<int>(config.world_size),
                                               static_cast<int>(config.rank));
    const wait_policy policy{std::chrono::steady_clock::now() + collective_timeout, {}};
    const std::int64_t rank = config.rank;
    const std::int64_t low = comm->all_reduce(rank, core::reduce_op::min, policy);
    const std::int64_t high = comm->all_reduce(rank, core::reduce_op::max, policy);
    comm->barrier(policy);
    const bool agreed = low == 0 && high == static_cast<std::int64_t>(config.world_size) - 1;
    out << "kvsim real --nccl-check: " << describe(config) << ", device " << device << " ("
        << device_name(device) << "): all_reduce MIN " << low << " MAX " << high
        << ", barrier passed: "
        << (agreed ? "ok"
                   : "WRONG (expected MIN 0 and MAX " + std::to_string(config.world_size - 1) + ")")
        << "\n";
    return agreed ? 0 : 1;
  } catch (const real_backend_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace kvsim::real
