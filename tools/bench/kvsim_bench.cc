// kvsim_bench: the simulator's speed against the ceiling of a fiber-based design, measured
// side by side in one process (machines here are shared and noisy: only ratios from the same
// run mean anything). Google Benchmark runs:
//   BM_RawFiberYield        Boost.Fiber's own round-robin scheduler, fibers that only yield;
//   BM_SimStepsOnly         the same fibers as actors of a kvsim world (every switch is a
//                           recorded schedule decision): the kernel's overhead alone;
//   BM_TestWorldDecisions   the two-rank test world (transfer, abort, collectives, real page
//                           bytes, I1 and I8 checkers), requests back to back.
//   BM_Page42               the catalogue's page42 on the safe core as `kvsim explore` runs it
//                           (random strategy, seeds 1, 2, ..., every checker): decisions and
//                           runs per CPU-second;
//   BM_Page42NoCheckers     page42's world with no checker attached: the cluster, the core and the
//                           actors alone, the ceiling for BM_Page42's decisions per second;
//   BM_DecodeRanks/N        page42's requests on N decode ranks (every one receives and aborts):
//                           the cost per decision as the world grows (the target: flat in N);
//   BM_ConcurrentRequests/N 64 requests on one prefill and one decode rank, up to N live per
//                           rank (1: the serial path; 8, 64: batched on the rank's strand):
//                           the cost per decision as a rank serves more at once (the target:
//                           within 1.5x of N = 1);
//   BM_ExploreJobs/J        `kvsim explore` on page42 with J worker processes, the same 20,000
//                           seeds each time (real time: the work is in children);
//   BM_TokenThroughCore     one abort token issued and accepted through the core's
//                           abort_token_issuer and abort_token_verifier (MAC, checks, duplicate
//                           memory, events);
//   BM_TokenLibsodium       the same two MACs (sign, verify) in a bare libsodium loop from a
//                           prepared HMAC key state: the floor for the line above;
//   BM_TokenMacOnly         the core's token_mac alone (sign, verify): the crypto's share.
// Rates are per CPU-second unless a name ends in /real_time. The ratios (to the raw yield
// rate, 32 decode ranks to 2, 8 and 64 live requests to 1, --jobs 2 to --jobs 1, the core's
// token cost to libsodium's) are printed at the end, next to their targets.
// docs/performance.md has the figures.
#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <boost/fiber/all.hpp>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/abort_token.h"
#include "core/events.h"
#include "core/ports.h"
#include "properties/all_checkers.h"
#include "properties/leak_checker.h"
#include "properties/use_after_free_checker.h"
#include "spec/catalogue.h"
#include "scenarios/scenario_world.h"
#include "scenarios/two_rank_abort.h"
#include "sim/search/random_walk.h"
#include "sim/world.h"
#include "tools/bench/allocation_counter.h"
#include "tools/kvsim/allocator_tuning.h"
#include "tools/kvsim/explore_search.h"
#include "tools/kvsim/run_one.h"
#include "tools/kvsim/strategy_spec.h"

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

kvsim::scenarios::scenario_spec catalogue_scenario(const std::string& name) {
  using namespace kvsim::tools;
  return find_scenario(load_scenarios(default_catalogue()), name, default_catalogue());
}

// Seeds 1, 2, ... of `spec` on the safe core, one run each as `kvsim explore` makes it (random
// strategy, the seed's fault profile, every checker, outcome only): decisions as items, runs
// as the "runs" rate. The seeds go on across iterations so that no run is repeated.
// `pooled`: one pool of fiber stacks for every run, as explore's job loop has; else each
// world takes fresh stacks of its own (what every run paid before the pool).
void run_seeds(benchmark::State& state, const kvsim::scenarios::scenario_spec& spec,
               bool pooled = true) {
  using namespace kvsim::tools;
  const strategy_spec random = parse_strategy("random");
  std::int64_t decisions = 0;
  std::int64_t runs = 0;
  std::uint64_t seed = 1;
  // As explore's job loop: one setup and one pool of fiber stacks, its seed and faults set per run.
  kvsim::sim::fiber_stacks stacks;
  run_setup setup{spec, kvsim::core::variant::safe(), random.text(), 0, {},
                  kvsim::properties::checker_family::all, pooled ? &stacks : nullptr};
  const std::uint64_t allocations_before = kvsim::bench::allocations_so_far();
  for (auto _ : state) {
    setup.seed = seed;
    setup.faults = faults_for(spec, seed);
    const auto chooser = random.make(seed);
    const run_report report = run_once(setup, *chooser, keep::verdict_only);  // as explore runs
    if (report.found) state.SkipWithError("a finding on the safe core");
    decisions += static_cast<std::int64_t>(report.decision_count);
    ++runs;
    ++seed;
  }
  state.SetItemsProcessed(decisions);
  state.counters["runs"] = benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsRate);
  // CPU time per decision (seconds; the console writes 850n for 850 ns) and decisions per run:
  // worlds of different sizes compared by what one decision costs.
  state.counters["per_decision"] = benchmark::Counter(
      static_cast<double>(decisions), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["decisions/run"] =
      static_cast<double>(decisions) / static_cast<double>(std::max<std::int64_t>(runs, 1));
  state.counters["allocs/run"] = static_cast<double>(kvsim::bench::allocations_so_far() - allocations_before) /
                                 static_cast<double>(std::max<std::int64_t>(runs, 1));
}

void BM_Page42(benchmark::State& state) { run_seeds(state, catalogue_scenario("page42")); }
BENCHMARK(BM_Page42)->MinTime(2.0)->Unit(benchmark::kMicrosecond);

// BM_Page42 with every world on fresh fiber stacks of its own: what the pool saves.
void BM_Page42OwnStacks(benchmark::State& state) { run_seeds(state, catalogue_scenario("page42"), false); }
BENCHMARK(BM_Page42OwnStacks)->MinTime(2.0)->Unit(benchmark::kMicrosecond);

// What a page42 run costs before its first decision and after its last: the world, its
// actors and every checker built and attached, then torn down, never run.
void BM_Page42BuildOnly(benchmark::State& state) {
  using namespace kvsim;
  const scenarios::scenario_spec spec = catalogue_scenario("page42");
  std::uint64_t seed = 1;
  sim::fiber_stacks stacks;  // as explore's job loop
  for (auto _ : state) {
    const sim::fault_profile faults = tools::faults_for(spec, seed);
    sim::random_walk chooser(seed++);
    const auto w = scenarios::make_scenario_world(spec, core::variant::safe(), chooser, faults, &stacks);
    properties::checker_set checkers(properties::liveness_from_us(faults), spec.heal_bound_us);
    checkers.attach(w->world());
    benchmark::DoNotOptimize(w.get());
  }
}
BENCHMARK(BM_Page42BuildOnly)->Unit(benchmark::kMicrosecond);

// page42's world with no checker attached, run to its end: what the simulated cluster, the
// core and the actors cost by themselves, the floor under BM_Page42 (whose every run also
// feeds each event to the checkers that read its kind and audits the books after). Seeds as
// BM_Page42, one pool of stacks; decisions as items.
void BM_Page42NoCheckers(benchmark::State& state) {
  using namespace kvsim;
  const scenarios::scenario_spec spec = catalogue_scenario("page42");
  std::int64_t decisions = 0;
  std::uint64_t seed = 1;
  sim::fiber_stacks stacks;
  for (auto _ : state) {
    const sim::fault_profile faults = tools::faults_for(spec, seed);
    sim::random_walk chooser(seed++);
    const auto w = scenarios::make_scenario_world(spec, core::variant::safe(), chooser, faults, &stacks);
    w->run();
    decisions += static_cast<std::int64_t>(w->world().decisions().size());
  }
  state.SetItemsProcessed(decisions);
}
BENCHMARK(BM_Page42NoCheckers)->MinTime(2.0)->Unit(benchmark::kMicrosecond);

// page42 on `decode_ranks` decode ranks: each request goes from the prefill rank to every
// decode rank and is aborted by all of them. Put through the catalogue's parser, so that the
// world is one `kvsim` would accept (spec/scenario_caps.h).
kvsim::scenarios::scenario_spec page42_on(std::uint32_t decode_ranks) {
  kvsim::scenarios::scenario_spec spec = catalogue_scenario("page42");
  spec.name = "page42_decode" + std::to_string(decode_ranks);
  spec.topology.decode_ranks = decode_ranks;
  return kvsim::scenarios::parse_scenario(kvsim::scenarios::to_json(spec), "kvsim_bench");
}

void BM_DecodeRanks(benchmark::State& state) {
  run_seeds(state, page42_on(static_cast<std::uint32_t>(state.range(0))));
}
BENCHMARK(BM_DecodeRanks)->Arg(2)->Arg(8)->Arg(32)->MinTime(1.0)->Unit(benchmark::kMicrosecond);

// One prefill and one decode rank serving the same stream of 64 requests (2 pages each, one
// arriving every microsecond, every 4th aborted by decode at any point) with up to
// `concurrency` of them live per rank: 1 is the serial path (one request after another), 8
// and 64 the batched one, each live request an actor of its rank on the rank's strand. Decode
// has 16 pages, 8 requests' worth: at 64 its pool runs out (a dozen times a run) and requests
// wait their turn in its page queue; at 1 and 8 it never does. Put through the
// catalogue's parser, so that it is a world `kvsim` accepts; run as BM_Page42 runs page42.
kvsim::scenarios::scenario_spec concurrent_requests(std::uint32_t concurrency) {
  nlohmann::json scenario = nlohmann::json::parse(R"({
    "name": "bench_concurrent",
    "description": "kvsim_bench: 64 requests, decode's pool smaller than their pages",
    "kind": "transfer",
    "topology": {"prefill_ranks": 1, "decode_ranks": 1, "pages_by_rank": [160, 16]},
    "requests": [],
    "load": {"count": 64, "inter_arrival_us": 1, "pages": 2, "abort": "anytime", "abort_every": 4},
    "expect": {"breaking_variant": "B1", "invariant": "I2", "damage": "I1"}
  })");
  scenario["name"] = "bench_concurrent" + std::to_string(concurrency);
  scenario["topology"]["concurrency"] = concurrency;
  return kvsim::scenarios::parse_scenario(scenario, "kvsim_bench");
}

void BM_ConcurrentRequests(benchmark::State& state) {
  run_seeds(state, concurrent_requests(static_cast<std::uint32_t>(state.range(0))));
}
BENCHMARK(BM_ConcurrentRequests)
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->MinTime(1.0)
    ->Unit(benchmark::kMicrosecond);

void BM_ExploreJobs(benchmark::State& state) {
  using namespace kvsim::tools;
  search_request request;
  request.spec = catalogue_scenario("page42");
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

// Token events go nowhere: the benchmark is of the crypto and the books, not of a recorder.
class discarding_sink final : public kvsim::core::event_sink {
 public:
  void emit(const kvsim::core::event&) override {}
};

kvsim::core::cluster_key bench_cluster_key() {
  kvsim::core::cluster_key key;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return key;
}

// One token per iteration: decode rank 1 issues it for a fresh room, prefill rank 0 accepts
// the ABORT carrying it (MAC verified once, duplicate memory, events).
void BM_TokenThroughCore(benchmark::State& state) {
  using namespace kvsim::core;
  discarding_sink sink;
  const cluster_key key = bench_cluster_key();
  abort_token_issuer issuer(1, key, 1, sink);
  abort_token_verifier verifier(0, key, sink);
  room_id room = 0;
  for (auto _ : state) {
    const room_key request{++room, 0};
    const abort_token token = issuer.issue(request, 0);
    if (!verifier.accept_abort(token, request, 1)) state.SkipWithError("a genuine token refused");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenThroughCore)->Unit(benchmark::kNanosecond);

// The same work with libsodium alone: a message of the token's size (domain tag and fields),
// MACed from a prepared HMAC-SHA-512-256 key state copied per message, then verified by
// computing it again and comparing in constant time.
void BM_TokenLibsodium(benchmark::State& state) {
  const kvsim::core::cluster_key key = bench_cluster_key();
  std::array<unsigned char, 51 + 36> message{};  // the domain tag and the token's fields
  crypto_auth_hmacsha512256_state prepared;
  crypto_auth_hmacsha512256_init(&prepared, key.bytes.data(), key.bytes.size());
  const auto mac_of = [&](unsigned char* out) {
    crypto_auth_hmacsha512256_state state_copy;
    std::memcpy(&state_copy, &prepared, sizeof prepared);
    crypto_auth_hmacsha512256_update(&state_copy, message.data(), message.size());
    crypto_auth_hmacsha512256_final(&state_copy, out);
  };
  std::uint64_t nonce = 0;
  for (auto _ : state) {
    ++nonce;
    std::memcpy(message.data() + message.size() - sizeof nonce, &nonce, sizeof nonce);
    std::array<unsigned char, crypto_auth_BYTES> mac{};
    std::array<unsigned char, crypto_auth_BYTES> check{};
    mac_of(mac.data());
    mac_of(check.data());
    if (crypto_verify_32(mac.data(), check.data()) != 0) state.SkipWithError("MAC mismatch");
  }
  sodium_memzero(&prepared, sizeof prepared);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenLibsodium)->Unit(benchmark::kNanosecond);

// The core's MAC alone (kvsim::core::token_mac, as the issuer and the verifier hold it): sign
// and verify one token, without the verifier's duplicate memory and events. Against
// BM_TokenLibsodium, this is the crypto at production cost.
void BM_TokenMacOnly(benchmark::State& state) {
  using namespace kvsim::core;
  const token_mac mac(bench_cluster_key());
  abort_token token{{42, 0}, 1, 0, 1, 0, {}};
  for (auto _ : state) {
    ++token.nonce;
    token.mac = mac.sign(token);
    if (!mac.verify(token)) state.SkipWithError("a genuine token refused");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TokenMacOnly)->Unit(benchmark::kNanosecond);

// Collects every rate per benchmark so that main can print the ratios. Under
// --benchmark_repetitions the median stands for the benchmark (it comes after the
// repetitions); the other aggregates (mean, stddev, cv) are not rates.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      for (const auto& [counter, value] : run.counters) {
        rates[plain_name(run.benchmark_name())][counter] = value.value;
      }
    }
  }
  // "BM_Page42/min_time:2.000" as "BM_Page42": the name without the run options.
  static std::string plain_name(std::string name) {
    const auto at = name.find("/min_time:");
    if (at == std::string::npos) return name;
    const auto end = name.find('/', at + 1);
    return name.erase(at, end == std::string::npos ? std::string::npos : end - at);
  }
  // The rate `counter` of `name` (zero when it did not run, e.g. under --benchmark_filter).
  double rate(const std::string& name, const std::string& counter = "items_per_second") const {
    const auto it = rates.find(name);
    if (it == rates.end()) return 0;
    const auto value = it->second.find(counter);
    return value == it->second.end() ? 0 : value->second;
  }
  std::map<std::string, std::map<std::string, double>> rates;
};

// `part / whole`, or "n/a" when either did not run.
std::string ratio(double part, double whole) {
  if (part <= 0 || whole <= 0) return "n/a";
  std::ostringstream out;
  out << std::setprecision(3) << part / whole;
  return out.str();
}

// A rate in whole units: 16768, not 1.677e+04.
long long whole(double rate) { return std::llround(rate); }

void print_summary(const ratio_reporter& r) {
  const double raw = r.rate("BM_RawFiberYield");
  const double page42_decisions = r.rate("BM_Page42");
  const auto us_per_decision = [&](int ranks) {
    const double rate = r.rate("BM_DecodeRanks/" + std::to_string(ranks));
    return rate > 0 ? 1e6 / rate : 0.0;
  };
  // CPU ns per decision and decisions per run of the 64-request stream at `live` per rank.
  const auto concurrent = [&](int live) {
    const std::string name = "BM_ConcurrentRequests/" + std::to_string(live);
    const double rate = r.rate(name);
    return std::pair{rate > 0 ? 1e9 / rate : 0.0, r.rate(name, "decisions/run")};
  };
  const auto [ns_at1, decisions_at1] = concurrent(1);
  const auto [ns_at8, decisions_at8] = concurrent(8);
  const auto [ns_at64, decisions_at64] = concurrent(64);
  const double token_core = r.rate("BM_TokenThroughCore");
  const double token_floor = r.rate("BM_TokenLibsodium");
  const double token_mac = r.rate("BM_TokenMacOnly");
  const double jobs1 = r.rate("BM_ExploreJobs/1/real_time");
  const double jobs2 = r.rate("BM_ExploreJobs/2/real_time");
  std::cout << std::setprecision(4) << "\nsummary (rates per CPU-second unless marked real time; "
            << kvsim::tools::allocator_tuning_in_effect() << "):\n"
            << "  raw Boost.Fiber yields:          " << raw / 1e6 << " M/s\n"
            << "  simulator steps only:            " << r.rate("BM_SimStepsOnly") / 1e6
            << " M decisions/s = " << ratio(r.rate("BM_SimStepsOnly"), raw) << " x raw\n"
            << "  two-rank test world (100 req.):  " << r.rate("BM_TestWorldDecisions/100") / 1e6
            << " M decisions/s = " << ratio(r.rate("BM_TestWorldDecisions/100"), raw) << " x raw\n"
            << "  page42 full world:               " << page42_decisions / 1e6
            << " M decisions/s = " << ratio(page42_decisions, raw)
            << " x raw (target: >= 0.25)\n"
            << "  page42 world, no checker:        " << r.rate("BM_Page42NoCheckers") / 1e6
            << " M decisions/s = " << ratio(r.rate("BM_Page42NoCheckers"), raw)
            << " x raw (the ceiling of the line above)\n"
            << "  page42 runs:                     " << whole(r.rate("BM_Page42", "runs"))
            << " runs/CPU-s (target: >= 20000), " << whole(r.rate("BM_Page42", "allocs/run"))
            << " heap allocations per run\n"
            << "  page42 runs, own stacks per world: " << whole(r.rate("BM_Page42OwnStacks", "runs"))
            << " runs/CPU-s; one pool per search: "
            << ratio(r.rate("BM_Page42", "runs"), r.rate("BM_Page42OwnStacks", "runs")) << " x that\n"
            << "  page42 on 32 decode ranks, runs: " << whole(r.rate("BM_DecodeRanks/32", "runs"))
            << " runs/CPU-s\n"
            << "  per decision at 2 / 8 / 32 decode ranks: " << us_per_decision(2) << " / "
            << us_per_decision(8) << " / " << us_per_decision(32)
            << " us; 32 vs 2: " << ratio(us_per_decision(32), us_per_decision(2))
            << " x (target: <= 1.3)\n"
            << "  64 requests, per decision at 1 / 8 / 64 live per rank: " << whole(ns_at1) << " / "
            << whole(ns_at8) << " / " << whole(ns_at64) << " ns (" << whole(decisions_at1) << " / "
            << whole(decisions_at8) << " / " << whole(decisions_at64)
            << " decisions per run); 8 vs 1: " << ratio(ns_at8, ns_at1) << " x, 64 vs 1: " << ratio(ns_at64, ns_at1)
            << " x (target: <= 1.5)\n"
            << "  explore page42 20000 seeds (real time): --jobs 2 " << whole(jobs2)
            << " vs --jobs 1 " << whole(jobs1) << " runs/s = " << ratio(jobs2, jobs1) << " x (target: >= 1.7 when idle)\n"
            << "  abort token (issue + accept) through the core: "
            << whole(token_core > 0 ? 1e9 / token_core : 0.0) << " ns; bare libsodium (sign + verify): "
            << whole(token_floor > 0 ? 1e9 / token_floor : 0.0)
            << " ns; core vs libsodium: " << ratio(token_floor, token_core) << " x the cost\n"
            << "  the core's MAC alone (sign + verify): "
            << whole(token_mac > 0 ? 1e9 / token_mac : 0.0)
            << " ns; vs libsodium: " << ratio(token_floor, token_mac) << " x the cost\n";
}

}  // namespace

int main(int argc, char** argv) {
  // As kvsim itself runs (tools/kvsim/allocator_tuning.h); KVSIM_ALLOCATOR_TUNING=off measures
  // with glibc's defaults instead.
  kvsim::tools::tune_allocator_or_restart(argv);
  if (sodium_init() < 0) {
    std::cerr << "kvsim_bench: libsodium could not be initialised\n";
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter);
  return 0;
}
