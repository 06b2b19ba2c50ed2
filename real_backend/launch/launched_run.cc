#include "real_backend/launch/launched_run.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

#include "real_backend/launch/control_step_link.h"
#include "real_backend/errors.h"
#include "real_backend/host/host_data_plane.h"
#include "real_backend/launch/launched_region.h"
#include "real_backend/launch/process_launch.h"
#include "real_backend/launch/rank_process.h"
#include "real_backend/launch/rank_spawn.h"
#include "real_backend/host/rank_thread.h"
#include "real_backend/launch/remote_rank.h"
#include "real_backend/scripts/script_rank.h"
#include "real_backend/wire/tcp_messenger.h"
#include "real_backend/scripts/transfer_context.h"
#include "real_backend/scripts/transfer_prefill.h"

namespace kvsim::real {
namespace {

using clock_type = std::chrono::steady_clock;

constexpr auto rank_idle = std::chrono::microseconds(50);
// Either rank waits rank_start_patience (rank_spawn.h) for the other to start (a launcher
// starts them in any order) and for rank 0's word on where the memory is.
constexpr auto exit_patience = std::chrono::milliseconds(10'000);
constexpr const char* region_word = "region ";

// Every refusal on a link is thrown and printed once by the command; the messenger's own log
// would print it a second time. A connection refused while rank 0 accepts is not thrown (the
// next one is accepted: peer_acceptor.h), so those lines are printed as they come, until
// `accepting` is cleared: the operator sees a stranger, or a rank 1 with another key, at once.
void quiet(tcp_messenger& wire, const std::atomic<bool>* accepting = nullptr) {
  wire.set_refusal_log([accepting](const std::string& line) {
    if (accepting != nullptr && accepting->load()) std::cerr << "kvsim real: " << line << "\n";
  });
}

real_outcome drive(const scenarios::scenario_spec& spec, core::variant v,
                   const std::string& variant_name, const launch_config& launch,
                   const run_secret& secret, const script_options& options) {
  const std::string name = launched_region_name(secret, launch.master_port);
  // Removed once rank 1 has it mapped, or on the way out, or when a launcher stops rank 0
  // before (SIGTERM, SIGINT, SIGHUP: region_name_owner). A signal between the name's making
  // and its owner waits for the owner; rank 0 has no other thread yet.
  termination_signals_held held;
  host_data_plane plane(shared_region::create_named(name, transfer_region_bytes(spec)));
  region_name_owner owner(name);
  held.release();
  transfer_context context(spec, v, plane, secret);
  auto engine = plane.make_transfer_engine(prefill_rank, *context.prefill_pages,
                                           {{decode_rank, context.decode_memory.get()}});
  hold_gated_transfers(context, *engine);

  std::atomic<bool> accepting{true};  // outlives `wire`, whose log reads it
  tcp_messenger wire(prefill_rank, derive_link_key(secret));
  quiet(wire, &accepting);
  wire.accept_steps_from(decode_rank);
  wire.listen(launch.master_addr, launch.rendezvous_port);
  wire.accept_peers(1, rank_start_patience);
  accepting = false;
  auto link = std::make_unique<control_step_link>(wire, decode_rank);
  if (!link->write_line(region_word + name)) {
    throw real_backend_error("the decode rank (rank 1) closed its link before the run began");
  }
  remote_rank decode("the decode rank (rank 1)", std::move(link));

  std::vector<real_finding> decode_findings;
  std::vector<recorded_event> decode_events;
  std::string failure;
  bool serving = false;
  {
    rank_thread<prefill_actor> prefill_thread(
        "the prefill rank (rank 0)",
        [&] { return std::make_unique<prefill_actor>(context, wire, *engine); }, rank_idle);
    try {
      decode.expect("ready", rank_start_patience);
      owner.remove();  // rank 1 has mapped it: no name left behind, however the run ends
      decode.serve();
      serving = true;
      local_rank<prefill_actor> prefill(prefill_thread);
      run_transfer_steps(context, prefill, decode, options);
      const auto deadline = clock_type::now() + options.patience;
      decode_findings = findings_from_json(decode.findings_json(deadline));
      decode_events = events_from_json(decode.events_json(deadline));
    } catch (const std::exception& e) {
      failure = e.what();
    }
    for (auto& g : context.gates) g->open();  // no copy worker may wait past the run
    // Two phases, as with a parent: both ranks' threads stop (nobody reads the control plane
    // any more) before rank 1 exits and closes its link.
    if (serving) {
      try {
        decode.stop(clock_type::now() + exit_patience);
      } catch (const std::exception& e) {
        if (failure.empty()) failure = e.what();
      }
    }
    prefill_thread.stop();
  }
  // Rank 1 exits once told (a rank 1 that never served learns of the end from its link
  // closing, and exits 3 saying so).
  if (serving) decode.release();
  if (!failure.empty()) throw real_backend_error(failure);

  return processes_outcome(
      spec.name, variant_name, plane.name(),
      {"prefill rank 0 in process " + std::to_string(getpid()) + " (" + to_string(launch.source) +
           "), decode rank 1 in a process of its own: pages in shared memory (" + name +
           ", removed once both had mapped it), copies by prefill's worker threads into decode's "
           "pages, gates opened across processes",
       "control messages over TCP (" + launch.master_addr + ":" +
           std::to_string(launch.rendezvous_port) +
           ", authenticated with the run's key); rank 0 runs the script and hands rank 1 its "
           "steps as sealed step frames on that link"},
      {context.findings.findings(), decode_findings}, {context.recording.events(), decode_events});
}

void serve(const scenarios::scenario_spec& spec, core::variant v, const launch_config& launch,
           const run_secret& secret) {
  tcp_messenger wire(decode_rank, derive_link_key(secret));
  quiet(wire);
  wire.accept_steps_from(prefill_rank);
  wire.connect(prefill_rank, launch.master_addr, launch.rendezvous_port, rank_start_patience);
  control_step_link link(wire, prefill_rank);
  try {
    const std::optional<std::string> said = link.read_line(rank_start_patience);
    if (!said) throw real_backend_error("rank 0 did not say where the shared memory is in time");
    const std::string expected = region_word + launched_region_name(secret, launch.master_port);
    if (*said != expected) {
      throw real_backend_error("rank 0 said '" + said->substr(0, 80) + "', not '" + expected +
                               "' (this run's key and MASTER_PORT name the memory)");
    }
    host_data_plane plane(
        shared_region::open_named(expected.substr(std::string(region_word).size())));
    serve_decode_rank(spec, v, plane, secret, wire, link);
  } catch (const std::exception& e) {
    (void)link.write_line(std::string("failed ") + e.what());  // rank 0 reports it too
    throw;
  }
}

}  // namespace

launch_config launched_rank_config(const environment& env) {
  const launch_config launch = parse_launch_environment(env);
  const bool slurm = launch.source == launch_source::slurm;
  if (launch.source == launch_source::single) {
    throw launch_error(
        "launcher: --launched runs as one rank of a torchrun or srun launch, but neither RANK "
        "and WORLD_SIZE nor SLURM_PROCID and SLURM_NTASKS are set");
  }
  if (launch.world_size != 2) {
    throw launch_error(std::string("launcher: a transfer scenario runs as 2 ranks (prefill 0, "
                                   "decode 1), but ") +
                       (slurm ? "SLURM_NTASKS" : "WORLD_SIZE") + " is " +
                       std::to_string(launch.world_size));
  }
  if (!env("MASTER_PORT")) {
    throw launch_error(std::string("launcher: MASTER_PORT is not set (") +
                       (slurm
                            ? "srun sets none: export it in the batch script, a free port "
                              "on rank 0's machine"
                            : "torchrun sets it; set it wherever the ranks are started otherwise") +
                       "); rank 0 listens there, and names the run's shared memory by it");
  }
  return launch;
}

std::optional<real_outcome> run_launched_rank(const scenarios::scenario_spec& spec, core::variant v,
                                              const std::string& variant_name,
                                              const launch_config& launch, const run_secret& secret,
                                              const script_options& options) {
  if (launch.rank == prefill_rank) return drive(spec, v, variant_name, launch, secret, options);
  serve(spec, v, launch, secret);
  return std::nullopt;
}

}  // namespace kvsim::real
