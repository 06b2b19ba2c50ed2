#include "real_backend/launch/process_launch.h"

#include <chrono>
#include <vector>

#include "real_backend/cuda/cuda_process_plane.h"
#include "real_backend/errors.h"
#include "real_backend/host/host_data_plane.h"
#include "real_backend/host/host_page_pool.h"
#include "real_backend/launch/rank_process.h"
#include "real_backend/launch/rank_spawn.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/script_board.h"
#include "real_backend/scripts/transfer_context.h"

namespace kvsim::real {

std::size_t transfer_region_bytes(const scenarios::scenario_spec& spec) {
  const std::size_t pool = host_page_bytes_needed(spec.topology.pages_per_rank, spec.topology.page_bytes);
  return 2 * pool + std::size_t{host_data_plane::gates_max} * 8 +
         board_bytes(spec.topology.pages_per_rank) + (std::size_t{1} << 20);
}

std::size_t process_region_bytes(process_plane kind, const scenarios::scenario_spec& spec) {
  return kind == process_plane::cuda ? cuda_process_plane::region_bytes(spec.topology.pages_per_rank)
                                     : transfer_region_bytes(spec);
}

std::unique_ptr<data_plane> plane_over(process_plane kind, shared_region region) {
  if (kind == process_plane::cuda) return std::make_unique<cuda_process_plane>(std::move(region), 0);
  return std::make_unique<host_data_plane>(std::move(region));
}

real_outcome run_transfer_processes(const scenarios::scenario_spec& spec, core::variant v,
                                    const std::string& variant_name, const script_options& options,
                                    process_plane kind) {
  shared_region region = shared_region::create(process_region_bytes(kind, spec));
  const int region_fd = region.fd();
  const std::unique_ptr<data_plane> owned_plane = plane_over(kind, std::move(region));
  data_plane& plane = *owned_plane;
  const run_secret secret = draw_run_secret();
  transfer_context context(spec, v, plane, secret);  // the script's view: keys, gates, board
  const reserved_port port;
  const auto launch = [&](core::rank_id rank) {
    return rank_process_launch{rank, 2, port.port(), region_fd};
  };

  spawned_rank decode = spawn_rank_process("the decode rank's process", launch(decode_rank), secret);
  spawned_rank prefill;
  std::vector<real_finding> prefill_findings;
  std::vector<real_finding> decode_findings;
  std::vector<recorded_event> prefill_events;
  std::vector<recorded_event> decode_events;
  std::string failure;
  try {
    await_word({&decode}, decode, "listening", rank_start_patience);
    prefill = spawn_rank_process("the prefill rank's process", launch(prefill_rank), secret);
    await_word({&decode, &prefill}, prefill, "ready", rank_start_patience);
    await_word({&decode, &prefill}, decode, "ready", rank_start_patience);
    prefill.rank->serve();
    decode.rank->serve();
    run_transfer_steps(context, *prefill.rank, *decode.rank, options);
    const auto deadline = std::chrono::steady_clock::now() + options.patience;
    prefill_findings = findings_from_json(prefill.rank->findings_json(deadline));
    decode_findings = findings_from_json(decode.rank->findings_json(deadline));
    prefill_events = events_from_json(prefill.rank->events_json(deadline));
    decode_events = events_from_json(decode.rank->events_json(deadline));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (auto& g : context.gates) g->open();  // no copy worker may wait past the run
  const pid_t prefill_pid = prefill.pid;
  const pid_t decode_pid = decode.pid;
  end_rank_processes({&prefill, &decode}, failure);
  if (!failure.empty()) throw real_backend_error(failure);

  return processes_outcome(
      spec.name, variant_name, plane.name(),
      {"prefill rank 0 in process " + std::to_string(prefill_pid) + ", decode rank 1 in process " +
           std::to_string(decode_pid) +
           (kind == process_plane::cuda
                ? " on " + plane.device_of(0) +
                      ": pages allocated by this process and opened by both by CUDA IPC, copies "
                      "by prefill's cudaMemcpyAsync into decode's pages, gates as host-mapped "
                      "words prefill's gate kernel spins on"
                : ": pages in shared memory (memfd) that both map, copies by prefill's worker "
                  "threads into decode's pages, gates opened across processes"),
       "control messages over loopback TCP (127.0.0.1:" + std::to_string(port.port()) +
           ", authenticated with a run key drawn for this run); the script hands each rank its "
           "steps over a socketpair"},
      {context.findings.findings(), prefill_findings, decode_findings},
      {prefill_events, decode_events});
}

}  // namespace kvsim::real
