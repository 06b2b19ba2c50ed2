// kvsim: the command-line tool. One subcommand per job: list and run for a first look,
// explore for CI property runs, replay / shrink / export for a recorded failure, demo for the
// main job (explore --all), real for the GPU backend.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <new>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "spec/one_line.h"
#include "tools/kvsim/allocator_tuning.h"
#include "tools/kvsim/build_info.h"
#include "tools/kvsim/catalogue_location.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/commands.h"
#ifdef KVSIM_HAVE_REAL_BACKEND
#include "real_backend/real_command.h"
#endif

namespace {

constexpr const char* usage =
    "usage: kvsim <command> [flags]   (kvsim <command> --help for its flags)\n"
    "commands:\n"
    "  list      the catalogue's scenarios, their breaking variant and invariant\n"
    "  run       one run of a scenario (variant, strategy, seed), optionally its trace\n"
    "  explore   search scenarios under a budget (random, pct:D, dpor[:P]); --all\n"
    "            checks every breaking variant is found and safe is clean\n"
    "  replay    re-run a trace file, strictly or leniently\n"
    "  shrink    minimise a failing trace (fewer faults, preemptions, decisions)\n"
    "  export    a trace as a Perfetto/Chrome timeline or a text log\n"
    "  demo      the main job: explore --all with a one-minute budget\n"
    "  merge     the --json files of explore's shards, as the unsharded search's report\n"
    "  check     replay a corpus of traces as regression tests (fixed bugs stay fixed)\n"
    "  check-declarations  the debug check of what steps declare (dpor's independence)\n"
    "  real      a scripted scenario on the GPU backend\n"
    "  --help    this text;  --version  the version\n"
    "exit codes: 0 expectations held / no finding, 1 finding or unmet expectation,\n"
    "            2 usage or input error (one line on stderr), 4 explore: a worker died\n";

using command = std::function<int(const kvsim::tools::arguments&, std::ostream&)>;

// `kvsim real` lives in real_backend/, built only where CUDA and NCCL are found.
int run_real(const kvsim::tools::arguments& args, std::ostream& out) {
#ifdef KVSIM_HAVE_REAL_BACKEND
  // The same catalogue the other commands find (an installed kvsim's, next to its binary);
  // the real backend has no built-in copy, so it keeps its own default when only that exists.
  kvsim::tools::arguments with_catalogue = args;
  const auto catalogue = kvsim::tools::default_catalogue();
  if (std::find(args.begin(), args.end(), "--catalogue") == args.end() &&
      catalogue != kvsim::tools::builtin_catalogue_name) {
    with_catalogue.insert(with_catalogue.end(), {"--catalogue", catalogue.string()});
  }
  return kvsim::real::run_real_command(with_catalogue, out, std::cerr);
#else
  (void)args;
  (void)out;
  throw kvsim::tools::input_error("this kvsim was built without CUDA and NCCL (no real backend)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  kvsim::tools::tune_allocator_or_restart(argv);
  const std::map<std::string, command> commands{
      {"list", kvsim::tools::cmd_list},       {"run", kvsim::tools::cmd_run},
      {"explore", kvsim::tools::cmd_explore}, {"replay", kvsim::tools::cmd_replay},
      {"shrink", kvsim::tools::cmd_shrink},   {"export", kvsim::tools::cmd_export},
      {"demo", kvsim::tools::cmd_demo},          {"merge", kvsim::tools::cmd_merge},
      {"check-declarations", kvsim::tools::cmd_check_declarations},
      {"check", kvsim::tools::cmd_check},
      {"real", run_real},
  };
  if (argc < 2) {
    std::cerr << "kvsim: expected a command (try 'kvsim --help')\n";
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << usage;
    return 0;
  }
  if (name == "--version") {
    std::cout << "kvsim " << KVSIM_VERSION << " (commit " << kvsim::tools::build_commit() << ")\n";
    return 0;
  }
  const auto it = commands.find(name);
  if (it == commands.end()) {
    std::cerr << "kvsim: unknown command '" << kvsim::spec::echoed(name) << "' (try 'kvsim --help')\n";
    return 2;
  }
  // Every error line goes through spec::error_line: whatever text a path, a name or a file
  // put into it, it stays one line of bounded length, with no terminal escapes.
  const auto error = [&name](const std::string& line) {
    std::cerr << kvsim::spec::error_line("kvsim " + name + ": " + line) << "\n";
  };
  try {
    const kvsim::tools::arguments args(argv + 2, argv + argc);
    return it->second(args, std::cout);
  } catch (const kvsim::tools::usage_error& e) {
    error(e.what() + std::string(" (try 'kvsim ") + name + " --help')");
  } catch (const kvsim::tools::input_error& e) {
    error(e.what());
  } catch (const std::bad_alloc&) {
    // Inputs are capped far below this (spec/input_caps.h, scenarios/SCHEMA.md); the machine
    // itself is short (a ulimit, a cgroup). The world hands an actor's bad_alloc back here.
    std::cerr << "kvsim " << name << ": out of memory\n";
  } catch (const std::filesystem::filesystem_error& e) {
    error(std::string("file system error: ") + e.what());
  } catch (const std::exception& e) {
    error(std::string("internal error: ") + e.what());
  }
  return 2;
}
