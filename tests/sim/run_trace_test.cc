// Traces of real runs: the same (scenario, strategy, seed) writes the same file byte for
// byte, in this build type and in every other (the golden digest below is checked by the
// default and the asan builds alike), and a trace loaded from disk replays its run.
#include "tests/support/fnv1a.h"
#include "sim/run_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/sim/two_rank_runs.h"

namespace kvsim::sim::run_trace_test {
namespace {

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using kvsim::testing::fnv1a;

class RunTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kvsim_run_trace_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One run of the test world with the planted use-after-free, written as a trace.
  std::filesystem::path record(std::uint64_t seed, const std::string& name) {
    random_walk chooser(seed);
    scenarios::two_rank_abort_world w(chooser, seed, testing::planted_use_after_free());
    properties::use_after_free_checker use_after_free;
    properties::leak_checker leaks;
    w.world().add_checker(use_after_free);
    w.world().add_checker(leaks);
    w.run();
    const auto path = dir_ / name;
    write_trace(path, capture_trace(w.world(), w.describe(), "release_before_drain",
                                    chooser.name(), seed));
    return path;
  }

  std::filesystem::path dir_;
};

// Seed 73 finds the planted use-after-free with A's late write landing in B's page.
constexpr std::uint64_t finding_seed = 73;
constexpr std::uint64_t golden_decision_hash = 0x0ad3b5e59dc5dc07;
// The file carries the kvsim version, so a version bump changes this digest too; so does a
// new fault kind in the profile (replay and forge, then peer_death, then misuse and
// late_status, were added with the decisions unchanged), and so did the profile's drawn
// faults_stop_us (this run's decisions unchanged: its faults stop after its last fault
// opportunity).
constexpr std::uint64_t golden_trace_digest = 0x8a56c45ce6f585cb;

TEST_F(RunTrace, TheSameRunTwiceWritesTheSameBytes) {
  for (std::uint64_t seed : {finding_seed, std::uint64_t{5}, std::uint64_t{6}}) {
    const auto first = record(seed, "first.json");
    const auto second = record(seed, "second.json");
    EXPECT_EQ(read_bytes(first), read_bytes(second)) << "seed " << seed;
  }
}

// The digest of one trace file, fixed here so that every build type must reproduce it.
// If a deliberate change to the simulator or the test world changes runs, update it and
// say so in the commit: it is the evidence that Release and ASan builds decide alike.
TEST_F(RunTrace, TheTraceIsIdenticalInEveryBuildType) {
  const std::string bytes = read_bytes(record(finding_seed, "golden.json"));
  const trace loaded = load_trace(dir_ / "golden.json");
  ASSERT_TRUE(loaded.found.has_value());
  EXPECT_EQ(loaded.found->invariant, "I1");
  std::cout << "trace digest " << std::hex << fnv1a(bytes) << " decision hash "
            << decision_hash(loaded.decisions) << std::dec << "\n";
  EXPECT_EQ(decision_hash(loaded.decisions), golden_decision_hash);
  EXPECT_EQ(fnv1a(bytes), golden_trace_digest);
}

TEST_F(RunTrace, ATraceLoadedFromDiskReplaysStrictlyToTheSameFinding) {
  const trace recorded = load_trace(record(finding_seed, "finding.json"));
  ASSERT_TRUE(recorded.found.has_value());
  replay again(recorded.decisions, replay_mode::strict);
  scenarios::two_rank_abort_world w(again, recorded.seed, testing::planted_use_after_free());
  properties::use_after_free_checker use_after_free;
  properties::leak_checker leaks;
  w.world().add_checker(use_after_free);
  w.world().add_checker(leaks);
  EXPECT_EQ(w.run().end, run_end::finding);
  EXPECT_FALSE(w.world().diverged().has_value());
  const trace replayed = capture_trace(w.world(), w.describe(), "release_before_drain",
                                       recorded.strategy, recorded.seed);
  EXPECT_EQ(replayed.events, recorded.events);
  EXPECT_EQ(replayed.found, recorded.found);
  EXPECT_EQ(replayed.decisions, recorded.decisions);
}

}  // namespace
}  // namespace kvsim::sim::run_trace_test
