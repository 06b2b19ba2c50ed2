// kvsim_bench: the simulator's speed against the ceiling of a fiber-based design, measured
// side by side in one process (machines here are shared and noisy: only ratios from the same
// run mean anything). Google Benchmark runs:
//   BM_RawFiberYield        Boost.Fiber's own round-robin scheduler, fibers that only yield;
//   BM_SimStepsOnly         the same fibers as actors of a kvsim world (every switch is a
//                           recorded schedule decision): the kernel's overhead alone;
//   BM_TestWorldDecisions   the two-rank test world (transfer, abort, collectives, real page
//                           bytes, I1 and I8 checkers), requests back to back.
//   BM_ExploreJobs/J        `kvsim explore` on a catalogue scenario with J worker processes,
//                           the same 20,000 seeds each time (real time: the work is in children).
// All report items_per_second = context switches, decisions or runs per second; the ratios to
// the raw yield rate, and of --jobs 2 to --jobs 1, are printed at the end.
#include <benchmark/benchmark.h>

#include <boost/fiber/all.hpp>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "properties/leak_checker.h"
#include "properties/use_after_free_checker.h"
#include "scenarios/two_rank_abort.h"
#include "sim/random_walk.h"
#include "sim/world.h"
#include "tools/kvsim/explore_search.h"
#include "tools/kvsim/run_one.h"

namespace {

constexpr int fibers = 4;
constexpr int yields_per_fiber = 2'000;

void BM_RawFiberYield(benchmark::State& state) {
  std::int64_t yields = 0;
  for (auto _ : state) {
    std::vector<boost::fibers::fiber> running;
    for (int f = 0; f < fibers; ++f) {
      running.emplace_back([] {
        for (int i = 0; i < yields_per_fiber; ++i) boost::this_fiber::yield();
      });
    }
    for (auto& fiber : running) fiber.join();
    yields += fibers * yields_per_fiber;
  }
  state.SetItemsProcessed(yields);
}
BENCHMARK(BM_RawFiberYield)->Unit(benchmark::kMillisecond);

void BM_SimStepsOnly(benchmark::State& state) {
  std::int64_t decisions = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    kvsim::sim::random_walk chooser(seed++);
    kvsim::sim::world w(chooser, kvsim::sim::world_config{1'000'000, 64 * 1024, {}});
    for (int f = 0; f < fibers; ++f) {
      w.spawn({0, "stepper", static_cast<std::uint32_t>(f)}, [&w] {
        for (int i = 0; i < yields_per_fiber; ++i) w.step();
      });
    }
    w.run();
    decisions += static_cast<std::int64_t>(w.decisions().size());
  }
  state.SetItemsProcessed(decisions);
}
BENCHMARK(BM_SimStepsOnly)->Unit(benchmark::kMillisecond);

void BM_TestWorldDecisions(benchmark::State& state) {
  std::int64_t decisions = 0;
  std::uint64_t seed = 1;
  kvsim::scenarios::two_rank_options options;
  options.requests = static_cast<std::uint32_t>(state.range(0));
  options.step_limit = 1'000'000;
  for (auto _ : state) {
    kvsim::sim::random_walk chooser(seed);
    kvsim::scenarios::two_rank_abort_world w(chooser, seed++, options);
    kvsim::properties::use_after_free_checker use_after_free;
    kvsim::properties::leak_checker leaks;
    w.world().add_checker(use_after_free);
    w.world().add_checker(leaks);
    w.run();
    decisions += static_cast<std::int64_t>(w.world().decisions().size());
  }
  state.SetItemsProcessed(decisions);
}
BENCHMARK(BM_TestWorldDecisions)->Arg(1)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_ExploreJobs(benchmark::State& state) {
  using namespace kvsim::tools;
  const auto all = load_scenarios(default_catalogue());
  search_request request;
  request.spec = find_scenario(all, "b11_stale_ack", default_catalogue());
  request.variant = kvsim::core::variant::safe();
  request.variant_label = "safe";
  request.max_seed = 20000;
  request.jobs = static_cast<std::uint64_t>(state.range(0));
  std::int64_t runs = 0;
  for (auto _ : state) {
    runs += static_cast<std::int64_t>(run_search(request, [](const search_result&) {}).runs);
  }
  state.SetItemsProcessed(runs);
}
BENCHMARK(BM_ExploreJobs)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// Collects items_per_second per benchmark so that main can print the ratios.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) rates[run.benchmark_name()] = it->second.value;
    }
  }
  std::map<std::string, double> rates;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto raw = reporter.rates.find("BM_RawFiberYield");
  if (raw != reporter.rates.end() && raw->second > 0) {
    std::cout << "\nratios to the raw Boost.Fiber yield rate (" << raw->second / 1e6
              << " M switches/s), measured in this run:\n";
    for (const auto& [name, rate] : reporter.rates) {
      if (name == raw->first || name.rfind("BM_ExploreJobs", 0) == 0) continue;
      std::cout << "  " << name << ": " << rate / 1e6 << " M decisions/s = " << rate / raw->second
                << " x raw\n";
    }
  }
  const auto one = reporter.rates.find("BM_ExploreJobs/1/real_time");
  const auto two = reporter.rates.find("BM_ExploreJobs/2/real_time");
  if (one != reporter.rates.end() && two != reporter.rates.end() && one->second > 0) {
    std::cout << "explore --jobs 2 vs --jobs 1: " << two->second << " vs " << one->second
              << " runs/s = " << two->second / one->second << " x\n";
  }
  return 0;
}
