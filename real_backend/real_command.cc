#include "real_backend/real_command.h"

#include <algorithm>
#include <optional>

#include "real_backend/cuda_data_plane.h"
#include "real_backend/devices.h"
#include "real_backend/errors.h"
#include "real_backend/nccl_selftest.h"
#include "real_backend/prefetch_script.h"
#include "real_backend/run_secret.h"
#include "real_backend/script_support.h"
#include "real_backend/transfer_script.h"
#include "scenarios/catalogue.h"

namespace kvsim::real {
namespace {

constexpr const char* usage_text =
    "usage: kvsim real --scenario NAME [--variant V] [--json] [--catalogue FILE]\n"
    "       kvsim real --list [--catalogue FILE]\n"
    "       kvsim real --nccl-check [--key-file FILE]\n"
    "       kvsim real --new-run-key\n"
    "Runs a scripted catalogue scenario with the production core on CUDA memory, real\n"
    "asynchronous copies and NCCL, and reports it in the simulator's finding format.\n"
    "  --scenario NAME   a scenario the real backend scripts (see --list)\n"
    "  --variant V       safe (default), a bug name B1..B12, H1..H3, or canary\n"
    "  --json            one JSON object: scenario, variant, backend, devices,\n"
    "                    simulated_peers, finding (null or {invariant, message}), also, notes\n"
    "  --catalogue FILE  the catalogue to read (default: the repository's)\n"
    "  --list            the scenarios the real backend scripts, with their breaking variant\n"
    "  --nccl-check      every process of a torchrun/srun launch joins one NCCL communicator\n"
    "                    (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or SLURM_*);\n"
    "                    its links prove the run's key: KVSIM_RUN_KEY (64 hex digits, the same\n"
    "                    for every rank) or --key-file FILE (those digits, mode 600)\n"
    "  --new-run-key     prints a fresh run key (libsodium's CSPRNG) for KVSIM_RUN_KEY\n"
    "Exit status: 0 no finding, 1 a finding, 2 usage error or no GPU, 3 the run failed.\n";

struct options {
  std::optional<std::string> scenario;
  std::string variant = "safe";
  bool json = false;
  bool list = false;
  bool nccl_check = false;
  bool new_run_key = false;
  std::optional<std::string> key_file;
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
  if (o.key_file && !o.nccl_check) throw usage_error{"--key-file goes with --nccl-check"};
  if (!o.scenario && (variant_given || o.json)) {
    throw usage_error{"--variant and --json go with --scenario"};
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

std::uint32_t ranks_of(const scenarios::scenario_spec& spec) {
  return spec.kind == scenarios::scenario_kind::transfer ? 2 : spec.topology.attention_group;
}

int run_scenario(const options& o, const std::vector<scenarios::scenario_spec>& catalogue,
                 std::ostream& out, std::ostream& err) {
  const auto it = std::find_if(catalogue.begin(), catalogue.end(),
                               [&](const auto& s) { return s.name == *o.scenario; });
  if (it == catalogue.end()) {
    err << "kvsim real: no scenario '" << *o.scenario << "' in " << o.catalogue
        << " (real scenarios: " << scripted_names(catalogue) << ")\n";
    return 2;
  }
  if (const auto why = unscripted_reason(*it)) {
    err << "kvsim real: scenario '" << it->name
        << "' is not scripted for the real backend: " << *why
        << " (run it in the simulator; real scenarios: " << scripted_names(catalogue) << ")\n";
    return 2;
  }
  const std::optional<core::variant> v = real_variant(o.variant);
  if (!v) {
    err << "kvsim real: unknown variant '" << o.variant << "' (safe, B1..B12, H1..H3 or canary)\n";
    return 2;
  }
  const device_probe probe = probe_devices();
  if (probe.count == 0) {
    err << "kvsim real: no CUDA device found (" << probe.error << ")\n";
    return 2;
  }
  std::vector<int> devices;
  for (int d = 0; d < probe.count && devices.size() < ranks_of(*it); ++d) devices.push_back(d);
  try {
    cuda_data_plane plane(devices);
    const real_outcome outcome = it->kind == scenarios::scenario_kind::transfer
                                     ? run_transfer_script(*it, *v, o.variant, plane)
                                     : run_prefetch_script(*it, *v, o.variant, plane);
    if (o.json) {
      out << to_json(outcome).dump() << "\n";
    } else {
      print_text(outcome, out);
    }
    return outcome.findings.empty() ? 0 : 1;
  } catch (const real_backend_error& e) {
    err << "kvsim real: " << e.what() << "\n";
    return 3;
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
  if (o.nccl_check) return run_nccl_check(out, err, o.key_file);
  if (o.new_run_key) {
    out << to_hex(draw_run_secret()) << "\n";
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
  return run_scenario(o, catalogue, out, err);
}

}  // namespace kvsim::real
