#include "real_backend/real_command.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "real_backend/cuda/cuda_data_plane.h"
#include "real_backend/cuda/devices.h"
#include "real_backend/errors.h"
#include "real_backend/host/host_data_plane.h"
#include "real_backend/launch/launched_run.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/nccl/nccl_selftest.h"
#include "real_backend/launch/prefetch_processes.h"
#include "real_backend/scripts/prefetch_script.h"
#include "real_backend/launch/process_launch.h"
#include "real_backend/launch/rank_process.h"
#include "real_backend/recording_trace.h"
#include "real_backend/wire/run_secret.h"
#include "real_backend/scripts/scenario_ranks.h"
#include "real_backend/scripts/script_support.h"
#include "real_backend/scripts/transfer_script.h"
#include "spec/catalogue.h"
#include "spec/scenario_caps.h"

namespace kvsim::real {
namespace {

constexpr const char* usage_text =
    "usage: kvsim real --scenario NAME [--variant V] [--data-plane cuda|host] [--ranks N]\n"
    "                  [--json] [--trace FILE] [--catalogue FILE]\n"
    "       kvsim real --scenario NAME [--variant V] --data-plane host --launched\n"
    "                  [--key-file FILE] [--json] [--trace FILE] [--catalogue FILE]\n"
    "       kvsim real --list [--catalogue FILE]\n"
    "       kvsim real --nccl-check [--key-file FILE]\n"
    "       kvsim real --new-run-key\n"
    "Runs a scripted catalogue scenario with the production core on CUDA memory, real\n"
    "asynchronous copies and NCCL, and reports it in the simulator's finding format.\n"
    "  --scenario NAME   a scenario the real backend scripts (see --list)\n"
    "  --variant V       safe (default), a bug name B1..B15, H1..H3, or canary\n"
    "  --data-plane P    cuda: KV pages on the GPU (the default where one is found); host:\n"
    "                    pages in host memory shared between processes, copies by worker\n"
    "                    threads, gates as real waits (the default without a GPU)\n"
    "  --ranks N         1 (default): the ranks are threads of this process; N, the\n"
    "                    scenario's ranks (2 for a transfer: prefill and decode; a HiCache\n"
    "                    case's attention group): each rank a process this one starts, the\n"
    "                    collectives and control messages over loopback TCP, their reports\n"
    "                    merged into one; --data-plane host, or cuda for a transfer on one\n"
    "                    GPU (decode's pages opened by CUDA IPC; untested on hardware)\n"
    "  --launched        this process is one rank of a transfer scenario that torchrun or\n"
    "                    srun started (RANK, WORLD_SIZE or SLURM_PROCID, SLURM_NTASKS; and\n"
    "                    MASTER_ADDR, MASTER_PORT): rank 0 (prefill) runs the script and\n"
    "                    prints the report, rank 1 (decode) prints only errors and exits 0\n"
    "                    when its part went as scripted; host data plane, one machine;\n"
    "                    the run's key from KVSIM_RUN_KEY or --key-file FILE\n"
    "  --json            one JSON object: scenario, variant, backend, devices,\n"
    "                    simulated_peers, finding (null or {invariant, message}), also, notes\n"
    "  --trace FILE      write the run's event log as a simulator trace marked \"origin\":\n"
    "                    \"real\" (atomically; checked before the run), for kvsim replay\n"
    "                    --lenient FILE (with --ranks N: the processes' logs merged)\n"
    "  --catalogue FILE  the catalogue to read (default: the repository's)\n"
    "  --list            the scenarios the real backend scripts, with their breaking variant\n"
    "  --nccl-check      every process of a torchrun/srun launch joins one NCCL communicator\n"
    "                    (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or SLURM_*);\n"
    "                    its links prove the run's key: KVSIM_RUN_KEY (64 hex digits, the same\n"
    "                    for every rank) or --key-file FILE (those digits, mode 600)\n"
    "  --new-run-key     prints a fresh run key (libsodium's CSPRNG) for KVSIM_RUN_KEY\n"
    "Exit status: 0 no finding, 1 a finding, 2 usage error or no GPU, 3 the run failed.\n";

// --ranks: at most the ranks a scenario may have on a side (a HiCache attention group).
constexpr std::uint32_t ranks_max = scenarios::caps::ranks_per_side_max;

struct options {
  std::optional<std::string> scenario;
  std::string variant = "safe";
  bool json = false;
  bool list = false;
  bool nccl_check = false;
  bool new_run_key = false;
  std::optional<std::string> key_file;
  std::optional<std::string> data_plane;  // "cuda", "host"; empty: cuda where a GPU is found
  std::uint32_t ranks = 1;
  bool launched = false;  // --launched: one rank of a torchrun/srun launch (launched_run.h)
  std::optional<std::string> trace;  // --trace FILE
  bool help = false;
  std::string catalogue = KVSIM_DEFAULT_CATALOGUE;
};

struct usage_error {
  std::string line;
};

options parse(const std::vector<std::string>& args) {
  options o;
  bool variant_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw usage_error{a + " needs a value"};
      return args[++i];
    };
    if (a == "--scenario") {
      o.scenario = value();
    } else if (a == "--variant") {
      o.variant = value();
      variant_given = true;
    } else if (a == "--data-plane") {
      o.data_plane = value();
      if (*o.data_plane != "cuda" && *o.data_plane != "host")
        throw usage_error{"--data-plane is cuda or host (got '" + *o.data_plane + "')"};
    } else if (a == "--ranks") {
      const std::string n = value();
      const bool digits =
          !n.empty() && n.size() <= 2 && n.find_first_not_of("0123456789") == std::string::npos;
      const unsigned long ranks = digits ? std::stoul(n) : 0;
      if (ranks < 1 || ranks > ranks_max) {
        throw usage_error{"--ranks is 1.." + std::to_string(ranks_max) + " (got '" + n + "')"};
      }
      o.ranks = static_cast<std::uint32_t>(ranks);
    } else if (a == "--launched") {
      o.launched = true;
    } else if (a == "--trace") {
      o.trace = value();
    } else if (a == "--catalogue") {
      o.catalogue = value();
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--nccl-check") {
      o.nccl_check = true;
    } else if (a == "--key-file") {
      o.key_file = value();
    } else if (a == "--new-run-key") {
      o.new_run_key = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else {
      throw usage_error{"unknown argument '" + a + "' (try 'kvsim real --help')"};
    }
  }
  if (o.help) return o;
  const int modes =
      (o.scenario ? 1 : 0) + (o.list ? 1 : 0) + (o.nccl_check ? 1 : 0) + (o.new_run_key ? 1 : 0);
  if (modes == 0)
    throw usage_error{"expected --scenario NAME, --list or --nccl-check (try 'kvsim real --help')"};
  if (modes > 1) throw usage_error{"--scenario, --list, --nccl-check and --new-run-key go alone"};
  if (o.key_file && !o.nccl_check && !o.launched) {
    throw usage_error{"--key-file goes with --nccl-check or --launched"};
  }
  if (!o.scenario &&
      (variant_given || o.json || o.data_plane || o.ranks != 1 || o.trace || o.launched)) {
    throw usage_error{
        "--variant, --data-plane, --ranks, --launched, --json and --trace go with --scenario"};
  }
  if (o.launched && o.ranks != 1) {
    throw usage_error{"--launched and --ranks go apart (the launcher starts the ranks)"};
  }
  if (o.launched && o.data_plane != "host") {
    throw usage_error{"--launched needs --data-plane host (the ranks' pages in shared memory)"};
  }
  if (o.ranks > 1 && !o.data_plane) {
    throw usage_error{"--ranks " + std::to_string(o.ranks) +
                      " needs --data-plane host (the ranks' pages in host memory), or cuda for a "
                      "transfer scenario on a GPU"};
  }
  return o;
}

std::string scripted_names(const std::vector<scenarios::scenario_spec>& catalogue) {
  std::string names;
  for (const auto& s : catalogue) {
    if (unscripted_reason(s)) continue;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  return names.empty() ? "none" : names;
}

struct no_device {
  std::string line;
};

// --data-plane cuda, or nothing on a machine with a GPU: the devices, one per rank as far as
// they go. Nothing on a machine without one: the host plane.
std::unique_ptr<data_plane> make_plane(const options& o, std::uint32_t ranks) {
  if (o.data_plane == "host") return std::make_unique<host_data_plane>();
  const device_probe probe = probe_devices();
  if (probe.count == 0) {
    if (!o.data_plane) return std::make_unique<host_data_plane>();
    throw no_device{"no CUDA device found (" + probe.error + "); --data-plane host runs without one"};
  }
  std::vector<int> devices;
  for (int d = 0; d < probe.count && devices.size() < ranks; ++d) devices.push_back(d);
  return std::make_unique<cuda_data_plane>(devices);
}

// --data-plane cuda --ranks 2: refused before any process starts where no GPU is found.
void require_device() {
  const device_probe probe = probe_devices();
  if (probe.count == 0) {
    throw no_device{"no CUDA device found (" + probe.error + "); --data-plane host runs without one"};
  }
}

// The report of a run, as --json or text, and its exit status: 1 with a finding, else 0.
int report(const options& o, const scenarios::scenario_spec& spec, const real_outcome& outcome,
           std::ostream& out) {
  if (o.trace) write_recording(*o.trace, spec, outcome);
  if (o.json) {
    out << to_json(outcome).dump() << "\n";
  } else {
    print_text(outcome, out);
  }
  return outcome.findings.empty() ? 0 : 1;
}

// --launched: refusals (the environment, the key, the memory that exists already, a peer
// without the key) exit 2, a run that failed 3. Rank 1 prints nothing but errors and exits 0
// when its part went as scripted: rank 0's status is the run's (a launcher that sees a rank
// exit non-zero tears the job down, and rank 0 may not have printed its report yet).
int run_launched(const options& o, const scenarios::scenario_spec& spec, core::variant v,
                 const environment& env, std::ostream& out, std::ostream& err) {
  try {
    const launch_config launch = launched_rank_config(env);
    const run_secret secret = resolve_run_secret(launch, env, o.key_file);
    const bool reports = launch.rank == 0;
    if (reports && o.trace) check_recording_path(*o.trace);
    const std::optional<real_outcome> outcome =
        run_launched_rank(spec, v, o.variant, launch, secret);
    return outcome ? report(o, spec, *outcome, out) : 0;
  } catch (const launch_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  } catch (const link_refused& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  } catch (const recording_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  } catch (const real_backend_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 3;
  }
}

// The scenario --scenario names, checked against the catalogue and the other flags; null
// once the one line that refuses it is written to `err` (exit 2). Every way of running one (in
// this process, --ranks N, --launched, a rank process) passes here before any process starts
// or anything is written.
const scenarios::scenario_spec* checked_scenario(
    const options& o, const std::vector<scenarios::scenario_spec>& catalogue, std::ostream& err) {
  const auto it = std::find_if(catalogue.begin(), catalogue.end(),
                               [&](const auto& s) { return s.name == *o.scenario; });
  if (it == catalogue.end()) {
    err << "kvsim real: no scenario '" << *o.scenario << "' in " << o.catalogue
        << " (real scenarios: " << scripted_names(catalogue) << ")\n";
    return nullptr;
  }
  if (const auto why = served_at_once_reason(*it)) {
    err << "kvsim real: scenario '" << it->name << "' " << *why
        << ": run it in the simulator (kvsim run/explore)\n";
    return nullptr;
  }
  if (const auto why = unscripted_reason(*it)) {
    err << "kvsim real: scenario '" << it->name
        << "' is not scripted for the real backend: " << *why
        << " (run it in the simulator; real scenarios: " << scripted_names(catalogue) << ")\n";
    return nullptr;
  }
  if (!real_variant(o.variant)) {
    err << "kvsim real: unknown variant '" << o.variant << "' (safe, B1..B15, H1..H3 or canary)\n";
    return nullptr;
  }
  if (o.ranks > 1 && o.ranks != ranks_of(*it)) {
    err << "kvsim real: --ranks " << o.ranks << " runs each rank as a process, but '" << it->name
        << "' has " << ranks_of(*it) << " ranks ("
        << (it->kind == scenarios::scenario_kind::transfer ? "prefill and decode"
                                                           : "its attention group")
        << "): run it with --ranks " << ranks_of(*it) << " or --ranks 1\n";
    return nullptr;
  }
  if (o.ranks > 1 && o.data_plane == "cuda" && it->kind != scenarios::scenario_kind::transfer) {
    err << "kvsim real: --data-plane cuda --ranks " << o.ranks
        << " runs transfer scenarios; '" << it->name
        << "' is a HiCache case: its ranks run as processes with --data-plane host\n";
    return nullptr;
  }
  if (o.launched && it->kind != scenarios::scenario_kind::transfer) {
    err << "kvsim real: --launched runs transfer scenarios (prefill and decode); '" << it->name
        << "' is a HiCache case: run it with --ranks 1\n";
    return nullptr;
  }
  return &*it;
}

int run_scenario(const options& o, const std::vector<scenarios::scenario_spec>& catalogue,
                 const environment& env, std::ostream& out, std::ostream& err) {
  const scenarios::scenario_spec* const scenario = checked_scenario(o, catalogue, err);
  if (scenario == nullptr) return 2;
  const core::variant v = *real_variant(o.variant);
  const bool cuda_processes = o.ranks > 1 && o.data_plane == "cuda";
  if (o.launched) return run_launched(o, *scenario, v, env, out, err);
  if (started_as_rank_process(env)) {
    return scenario->kind == scenarios::scenario_kind::transfer
               ? run_rank_process(*scenario, v, env, err, cuda_processes)
               : run_prefetch_rank_process(*scenario, v, env, err);
  }
  try {
    if (o.trace) check_recording_path(*o.trace);
  } catch (const recording_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  }
  try {
    const real_outcome outcome = [&] {
      if (cuda_processes) {
        require_device();
        return run_transfer_processes(*scenario, v, o.variant, {}, process_plane::cuda);
      }
      if (o.ranks > 1) {
        return scenario->kind == scenarios::scenario_kind::transfer
                   ? run_transfer_processes(*scenario, v, o.variant)
                   : run_prefetch_processes(*scenario, o.variant);
      }
      std::unique_ptr<data_plane> plane = make_plane(o, ranks_of(*scenario));
      return scenario->kind == scenarios::scenario_kind::transfer
                 ? run_transfer_script(*scenario, v, o.variant, *plane)
                 : run_prefetch_script(*scenario, v, o.variant, *plane);
    }();
    return report(o, *scenario, outcome, out);
  } catch (const no_device& e) {
    err << "kvsim real: " << e.line << "\n";
    return 2;
  } catch (const real_backend_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 3;
  } catch (const recording_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  }
}

int list(const std::vector<scenarios::scenario_spec>& catalogue, std::ostream& out) {
  for (const auto& s : catalogue) {
    if (unscripted_reason(s)) continue;
    out << s.name << "  (" << scenarios::to_string(s.kind) << "; breaks with "
        << s.expect.breaking_variant << ", simulator reports " << s.expect.invariant << ")\n";
  }
  return 0;
}

}  // namespace

int run_real_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // First of all, before any thread or child exists: the run's key out of the environment
  // (run_secret.h), held here and wiped when the command ends.
  const environment env = with_run_key(process_environment(), take_run_key_from_environment());
  options o;
  try {
    o = parse(args);
  } catch (const usage_error& e) {
    err << "kvsim real: " << e.line << "\n";
    return 2;
  }
  if (o.help) {
    out << usage_text;
    return 0;
  }
  if (o.nccl_check) return run_nccl_check(out, err, o.key_file, env);
  if (o.new_run_key) {
    std::string hex = to_hex(draw_run_secret());
    out << hex << "\n";
    wipe(hex);
    return 0;
  }
  std::vector<scenarios::scenario_spec> catalogue;
  try {
    catalogue = scenarios::load_catalogue(o.catalogue);
  } catch (const scenarios::catalogue_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 2;
  }
  if (o.list) return list(catalogue, out);
  return run_scenario(o, catalogue, env, out, err);
}

}  // namespace kvsim::real
