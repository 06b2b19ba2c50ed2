#pragma once
// `kvsim real --data-plane host --ranks 2`: a transfer scenario with prefill and decode as
// separate OS processes on loopback. This process (the parent) makes the shared data plane
// (a memfd both ranks map: decode's pages are written by prefill's copy workers, gates are
// words in it), draws a fresh run key, reserves a loopback port, and starts itself twice
// (fork + exec of /proc/self/exe with its own arguments) with RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, KVSIM_RUN_KEY and the two inherited fds (rank_process.h). It runs the
// script, handing each step to the process of the rank that takes it over a socketpair,
// then collects both ranks' findings, stops them, waits for them and merges everything into
// one report: the findings in the order they were found (a counter in the shared memory).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/variant.h"
#include "real_backend/data_plane.h"
#include "real_backend/scripts/real_outcome.h"
#include "real_backend/host/shared_region.h"
#include "real_backend/scripts/transfer_script.h"
#include "spec/scenario_spec.h"

namespace kvsim::real {

// The shared memory a transfer scenario's two rank processes need: both ranks' pages, the
// gates, the script board, and room for the directory.
std::size_t transfer_region_bytes(const scenarios::scenario_spec& spec);

// Where the rank processes' pages are: host memory in the shared region (host_data_plane.h),
// or one GPU's memory opened by CUDA IPC, gates and board in the region (cuda_process_plane.h:
// untested on hardware).
enum class process_plane : std::uint8_t { host, cuda };
// The shared memory the run's processes need on `kind`.
std::size_t process_region_bytes(process_plane kind, const scenarios::scenario_spec& spec);
// The data plane of the parent or of a rank process, over the region they share.
std::unique_ptr<data_plane> plane_over(process_plane kind, shared_region region);

real_outcome run_transfer_processes(const scenarios::scenario_spec& spec, core::variant v,
                                    const std::string& variant_name,
                                    const script_options& options = {},
                                    process_plane kind = process_plane::host);

}  // namespace kvsim::real
