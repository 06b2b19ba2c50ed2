#pragma once
// Where this process sits in a multi-process launch, read from the environment that the
// cluster's own launcher sets, so that `torchrun` or `srun` start kvsim like any other job:
//   torchrun: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
//   Slurm:    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (MASTER_ADDR/MASTER_PORT as exported
//             by the batch script; srun sets neither)
// torchrun's variables win when both are present (torchrun run inside an srun allocation).
// With neither, this is one rank on loopback. A malformed value is one launch_error line.
//
// kvsim's own rendezvous (rank 0 hands out the NCCL id) listens on KVSIM_RENDEZVOUS_PORT when
// set, else on MASTER_PORT + 1 under torchrun (whose own store already listens on
// MASTER_PORT), else on MASTER_PORT.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kvsim::real {

enum class launch_source : std::uint8_t { single, torchrun, slurm };
const char* to_string(launch_source source);

inline constexpr const char* loopback_address = "127.0.0.1";
inline constexpr std::uint16_t default_master_port = 29500;  // torchrun's default

struct launch_config {
  launch_source source = launch_source::single;
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::uint32_t local_rank = 0;  // the device this process uses
  std::string master_addr = loopback_address;
  std::uint16_t master_port = default_master_port;
  std::uint16_t rendezvous_port = default_master_port;  // where rank 0 hands out the NCCL id

  friend bool operator==(const launch_config&, const launch_config&) = default;
};

// Looks a variable up; empty when it is not set.
using environment = std::function<std::optional<std::string>(std::string_view name)>;

launch_config parse_launch_environment(const environment& env);
launch_config launch_from_process_environment();
environment process_environment();  // std::getenv

// "rank 1 of 4 (torchrun, local rank 1), rendezvous at 10.0.0.1:29500"
std::string describe(const launch_config& config);

}  // namespace kvsim::real
