// `kvsim real` as a command, where no GPU is needed: usage errors are one line and exit 2,
// scenarios are looked up and checked before any device is touched, and a machine without a
// GPU gets one line saying so (exit 2).
#include "real_backend/real_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "real_backend/cuda/devices.h"

namespace kvsim::real::real_command_test {
namespace {

struct ran {
  int status = 0;
  std::string out;
  std::string err;
};

ran real(std::vector<std::string> args, bool with_catalogue = true) {
  if (with_catalogue) {
    args.push_back("--catalogue");
    args.push_back(KVSIM_CATALOGUE);
  }
  std::ostringstream out;
  std::ostringstream err;
  const int status = run_real_command(args, out, err);
  return {status, out.str(), err.str()};
}

void expect_one_line_error(const ran& r, const std::string& line) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, line + "\n");
}

TEST(RealCommand, UsageErrorsAreOneLineAndExit2) {
  expect_one_line_error(
      real({}, false),
      "kvsim real: expected --scenario NAME, --list or --nccl-check (try 'kvsim real --help')");
  expect_one_line_error(real({"--frobnicate"}),
                        "kvsim real: unknown argument '--frobnicate' (try 'kvsim real --help')");
  expect_one_line_error(real({"--scenario"}, false), "kvsim real: --scenario needs a value");
  expect_one_line_error(real({"--list", "--scenario", "page42"}),
                        "kvsim real: --scenario, --list, --nccl-check and --new-run-key go alone");
  expect_one_line_error(real({"--list", "--key-file", "k"}),
                        "kvsim real: --key-file goes with --nccl-check or --launched");
  expect_one_line_error(
      real({"--list", "--json"}),
      "kvsim real: --variant, --data-plane, --ranks, --launched, --json and --trace go with "
      "--scenario");
  expect_one_line_error(
      real({"--list", "--trace", "t.json"}),
      "kvsim real: --variant, --data-plane, --ranks, --launched, --json and --trace go with "
      "--scenario");
  expect_one_line_error(real({"--scenario", "page42", "--trace"}, false),
                        "kvsim real: --trace needs a value");
  expect_one_line_error(real({"--scenario", "page42", "--data-plane", "tpu"}),
                        "kvsim real: --data-plane is cuda or host (got 'tpu')");
  for (const char* n : {"0", "65", "-1", "2x", "", "007"}) {
    expect_one_line_error(real({"--scenario", "page42", "--ranks", n}),
                          std::string("kvsim real: --ranks is 1..64 (got '") + n + "')");
  }
  expect_one_line_error(real({"--scenario", "page42", "--ranks", "2"}),
                        "kvsim real: --ranks 2 needs --data-plane host (the ranks' pages in host "
                        "memory), or cuda for a transfer scenario on a GPU");
  expect_one_line_error(
      real({"--scenario", "hicache_local_active", "--data-plane", "cuda", "--ranks", "2"}),
      "kvsim real: --data-plane cuda --ranks 2 runs transfer scenarios; 'hicache_local_active' "
      "is a HiCache case: its ranks run as processes with --data-plane host");
  // --ranks N is every rank a process: N must be the scenario's ranks.
  expect_one_line_error(real({"--scenario", "page42", "--data-plane", "host", "--ranks", "3"}),
                        "kvsim real: --ranks 3 runs each rank as a process, but 'page42' has 2 "
                        "ranks (prefill and decode): run it with --ranks 2 or --ranks 1");
  expect_one_line_error(
      real({"--scenario", "hicache_local_active", "--data-plane", "host", "--ranks", "4"}),
      "kvsim real: --ranks 4 runs each rank as a process, but 'hicache_local_active' has 2 ranks "
      "(its attention group): run it with --ranks 2 or --ranks 1");
  // --launched: one rank of a torchrun/srun launch (launched_run.h)
  expect_one_line_error(real({"--list", "--launched"}),
                        "kvsim real: --variant, --data-plane, --ranks, --launched, --json and "
                        "--trace go with --scenario");
  expect_one_line_error(real({"--scenario", "page42", "--launched"}),
                        "kvsim real: --launched needs --data-plane host (the ranks' pages in "
                        "shared memory)");
  expect_one_line_error(
      real({"--scenario", "page42", "--data-plane", "host", "--launched", "--ranks", "2"}),
      "kvsim real: --launched and --ranks go apart (the launcher starts the ranks)");
  expect_one_line_error(
      real({"--scenario", "hicache_local_active", "--data-plane", "host", "--launched"}),
      "kvsim real: --launched runs transfer scenarios (prefill and decode); "
      "'hicache_local_active' is a HiCache case: run it with --ranks 1");
}

TEST(RealCommand, HelpAndListNeedNoDevice) {
  const ran help = real({"--help"}, false);
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: kvsim real --scenario NAME"), std::string::npos);
  const ran list = real({"--list"});
  EXPECT_EQ(list.status, 0) << list.err;
  for (const char* name : {"page42", "canary", "hicache_local_missing", "hicache_local_pending",
                           "hicache_local_active", "h3_skip_reduce"}) {
    EXPECT_NE(list.out.find(std::string(name) + "  ("), std::string::npos) << name;
  }
  EXPECT_EQ(list.out.find("b4_sibling_futures"), std::string::npos) << "needs the simulator";
}

// A pinned timeline (requests[i].pin) is the simulator's to replay: the real script would take
// the ledger's pages and abort on the gate, so it refuses the scenario rather than run it
// unpinned.
TEST(RealCommand, APinnedScenarioIsLeftToTheSimulator) {
  const std::string path = ::testing::TempDir() + "kvsim_real_pinned_catalogue.json";
  std::ofstream(path) << R"({"format": "kvsim-catalogue", "version": 1, "scenarios": [
    {"name": "page42_pinned", "kind": "transfer", "topology": {},
     "requests": [{"room": 42, "abort": "during_transfer"},
                  {"room": 42, "after": 0, "pin": {"decode_pages": [6, 7]}}],
     "faults": {"gates": [{"request": 0, "before_page": 1}]},
     "expect": {"breaking_variant": "B1", "invariant": "I3"}}]})";
  const ran pinned = real({"--scenario", "page42_pinned", "--data-plane", "host", "--catalogue",
                           path},
                          false);
  EXPECT_EQ(pinned.status, 2) << pinned.err;
  EXPECT_NE(pinned.err.find("kvsim real: scenario 'page42_pinned' is not scripted for the real "
                            "backend: request 1 pins its timeline"),
            std::string::npos)
      << pinned.err;
  EXPECT_EQ(std::count(pinned.err.begin(), pinned.err.end(), '\n'), 1);
}

// Requests served at once (topology.concurrency above 1), a pool per rank
// (topology.pages_by_rank), arrival times (requests[i].arrive_at_us, or a load block) and an
// engine that runs requests after their transfer (the engine block) are
// the simulator's until the real backend serves requests at once: every way of running such a
// scenario is refused in one line naming the field, exit 2, before any process starts or a
// trace is written, and --list leaves it out.
TEST(RealCommand, RequestsServedAtOnceAreLeftToTheSimulator) {
  expect_one_line_error(
      real({"--scenario", "batch_pool_pressure"}),
      "kvsim real: scenario 'batch_pool_pressure' serves requests at once (topology.concurrency "
      "64); the real backend serves them one after another: run it in the simulator (kvsim "
      "run/explore)");

  // page42, scriptable as it stands, with one of the fields each.
  const auto page42_with = [](const std::string& name, const std::string& topology,
                              const std::string& second_request) {
    return R"({"name": ")" + name + R"(", "kind": "transfer",
     "topology": {"pages_per_rank": 8)" + topology + R"(},
     "requests": [{"room": 42, "abort": "during_transfer"},
                  {"room": 42, "after": 0)" + second_request + R"(}],
     "faults": {"gates": [{"request": 0, "before_page": 1}]},
     "expect": {"breaking_variant": "B1", "invariant": "I3"}})";
  };
  const std::string path = ::testing::TempDir() + "kvsim_real_at_once_catalogue.json";
  std::ofstream(path) << R"({"format": "kvsim-catalogue", "version": 1, "scenarios": [)"
                      << page42_with("serial", "", "") << ","
                      << page42_with("at_once", R"(, "concurrency": 2)", "") << ","
                      << page42_with("pools", R"(, "pages_by_rank": [8, 6])", "") << ","
                      << page42_with("arrivals", "", R"(, "arrive_at_us": 30)") << ","
                      << R"({"name": "engine", "kind": "transfer", "topology": {},
                             "requests": [{"room": 42}],
                             "engine": {"decode_steps": 2, "store_on_finish": true},
                             "expect": {"breaking_variant": "B15", "invariant": "I7"}})"
                      << "]}";
  const std::string at_once =
      "kvsim real: scenario 'at_once' serves requests at once (topology.concurrency 2); the real "
      "backend serves them one after another: run it in the simulator (kvsim run/explore)";
  const std::string pools =
      "kvsim real: scenario 'pools' gives each rank a pool of its own (topology.pages_by_rank); "
      "the real backend gives every rank topology.pages_per_rank pages: run it in the simulator "
      "(kvsim run/explore)";
  const std::string arrivals =
      "kvsim real: scenario 'arrivals' has requests arrive over time (requests[1].arrive_at_us, "
      "given or added by a load block); the real backend serves them one after another from the "
      "start: run it in the simulator (kvsim run/explore)";
  const std::string engine =
      "kvsim real: scenario 'engine' runs requests on decode after their transfer (the engine "
      "block: forward passes, store jobs, preemption); the real backend finishes a request when "
      "its transfer completes: run it in the simulator (kvsim run/explore)";
  const std::string trace = ::testing::TempDir() + "kvsim_real_at_once_trace.json";
  std::remove(trace.c_str());
  for (const auto& [name, line] : std::vector<std::pair<std::string, std::string>>{
           {"at_once", at_once}, {"pools", pools}, {"arrivals", arrivals}, {"engine", engine}}) {
    // In this process, ranks as processes (host and GPU), and launched by torchrun or srun:
    // refused before the launcher's environment, a device or the trace path is looked at.
    for (const std::vector<std::string>& how : std::vector<std::vector<std::string>>{
             {},
             {"--data-plane", "host", "--trace", trace},
             {"--data-plane", "cuda"},
             {"--data-plane", "host", "--ranks", "2"},
             {"--data-plane", "cuda", "--ranks", "2"},
             {"--data-plane", "host", "--launched"},
             {"--variant", "B1", "--json"}}) {
      std::vector<std::string> args = {"--scenario", name, "--catalogue", path};
      args.insert(args.end(), how.begin(), how.end());
      SCOPED_TRACE(name + " with " + std::to_string(how.size()) + " more argument(s)");
      expect_one_line_error(real(args, false), line);
    }
  }
  EXPECT_FALSE(std::ifstream(trace).good()) << "a refused run wrote its trace";
  const ran list = real({"--list", "--catalogue", path}, false);
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_EQ(list.out.find("serial  ("), 0u) << list.out;
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 1) << list.out;
  // The name of a scenario the real backend runs is still the one it suggests.
  const ran unknown = real({"--scenario", "nope", "--catalogue", path}, false);
  EXPECT_NE(unknown.err.find("(real scenarios: serial)"), std::string::npos) << unknown.err;
}

TEST(RealCommand, ScenariosAndVariantsAreCheckedBeforeAnyDevice) {
  const ran unknown = real({"--scenario", "page43"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("kvsim real: no scenario 'page43' in "), std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("(real scenarios: page42, "), std::string::npos) << unknown.err;
  const ran unscripted = real({"--scenario", "b4_sibling_futures"});
  EXPECT_EQ(unscripted.status, 2);
  EXPECT_NE(unscripted.err.find("kvsim real: scenario 'b4_sibling_futures' is not scripted for the "
                                "real backend: "),
            std::string::npos)
      << unscripted.err;
  expect_one_line_error(real({"--scenario", "page42", "--variant", "B99"}),
                        "kvsim real: unknown variant 'B99' (safe, B1..B15, H1..H3 or canary)");
  const ran missing = real({"--list", "--catalogue", "/nonexistent/catalogue.json"}, false);
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err.find("kvsim real: /nonexistent/catalogue.json"), 0u) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
}

TEST(RealCommand, WithoutAGpuItSaysSoInOneLineAndExits2) {
  const device_probe probe = probe_devices();
  if (probe.count > 0)
    GTEST_SKIP() << "this machine has a GPU: the gpu-labelled tests run the scenarios";
  // One process, and prefill and decode as two processes on the GPU (--ranks 2: refused
  // before any process starts).
  const std::vector<std::vector<std::string>> runs = {
      {"--scenario", "page42", "--variant", "safe", "--data-plane", "cuda", "--json"},
      {"--scenario", "hicache_local_active", "--variant", "safe", "--data-plane", "cuda", "--json"},
      {"--scenario", "page42", "--variant", "B1", "--data-plane", "cuda", "--ranks", "2"},
  };
  for (const auto& args : runs) {
    const ran r = real(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.find("kvsim real: no CUDA device found (cudaGetDeviceCount: "), 0u) << r.err;
    EXPECT_NE(r.err.find("); --data-plane host runs without one"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(RealCommand, WithoutAGpuTheHostDataPlaneIsTheDefault) {
  const device_probe probe = probe_devices();
  if (probe.count > 0) GTEST_SKIP() << "this machine has a GPU: cuda is the default";
  const ran r = real({"--scenario", "page42", "--variant", "B1", "--json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("\"backend\":\"host\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"invariant\":\"I3\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kvsim::real::real_command_test
