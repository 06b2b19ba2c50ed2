// `kvsim merge` of the shards of a search reports what the unsharded search reports: the same
// table, JSON rows and JUnit (clock readings and where the traces lie aside) and the same exit
// code. And shards that are not the shards of one search are refused with one line, before
// anything is written.
#include "tools/kvsim/shard_merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/tools/cli_call.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/seed_plan.h"

namespace kvsim::tools::shard_merge_test {
namespace {

namespace fs = std::filesystem;
using testing::call;
using testing::captured;
using testing::fresh_dir;
using testing::read;

constexpr int shard_count = 4;

// What depends on the clock, on how the search was split, or on where its traces went:
// "0.012s", time="0.4", "jobs 1" / "4 shards merged", and DIR/<run>/traces/.
std::string masked(std::string text, const fs::path& dir) {
  text = std::regex_replace(text, std::regex(dir.string() + R"(/[a-z0-9]+/traces/)"), "TRACES/");
  text = std::regex_replace(text, std::regex(R"([0-9]+\.[0-9]+s)"), "T");
  text = std::regex_replace(text, std::regex(R"(time="[^"]*")"), "time=T");
  return std::regex_replace(text, std::regex(R"(jobs [0-9]+\)|[0-9]+ shards merged\))"), "HOW)");
}

// The JSON rows without their clock readings, trace directories masked.
nlohmann::json masked_rows(const fs::path& file, const fs::path& dir) {
  auto rows = nlohmann::json::parse(masked(read(file), dir));
  for (auto& row : rows) {
    row.erase("seconds");
    row.erase("seconds_to_first_finding");
    row.erase("budget_seconds");
  }
  return rows;
}

struct report {
  int code = 0;
  std::string table;
  nlohmann::json rows;
  std::string junit;
};

report explore_whole(std::vector<std::string> args, const fs::path& dir) {
  const fs::path run = dir / "whole";
  fs::create_directories(run);
  args.insert(args.end(), {"--out", (run / "traces").string(), "--json",
                           (run / "rows.json").string(), "--junit", (run / "junit.xml").string()});
  const captured c = call(cmd_explore, args);
  return {c.code, masked(c.out, dir), masked_rows(run / "rows.json", dir),
          masked(read(run / "junit.xml"), dir)};
}

// The shard files of `args` split `shard_count` ways (shard i with --jobs i % 2 + 1: workers do not
// change a shard's report either).
std::vector<std::string> explore_shards(const std::vector<std::string>& args, const fs::path& dir) {
  std::vector<std::string> files;
  for (int i = 0; i < shard_count; ++i) {
    const fs::path run = dir / ("shard" + std::to_string(i));
    fs::create_directories(run);
    std::vector<std::string> shard_args = args;
    shard_args.insert(shard_args.end(),
                      {"--shard", std::to_string(i) + "/" + std::to_string(shard_count), "--jobs",
                       std::to_string(i % 2 + 1), "--out", (run / "traces").string(), "--json",
                       (run / "rows.json").string()});
    call(cmd_explore, shard_args);
    files.push_back((run / "rows.json").string());
  }
  return files;
}

report merge(const std::vector<std::string>& files, const fs::path& dir) {
  std::vector<std::string> args{"--json", (dir / "merged.json").string(), "--junit",
                                (dir / "merged.xml").string()};
  args.insert(args.end(), files.begin(), files.end());
  const captured c = call(cmd_merge, args);
  return {c.code, masked(c.out, dir), masked_rows(dir / "merged.json", dir),
          masked(read(dir / "merged.xml"), dir)};
}

void expect_merge_is_the_unsharded_search(const std::vector<std::string>& args,
                                          const std::string& name) {
  const fs::path dir = fresh_dir("merge_" + name);
  const report whole = explore_whole(args, dir);
  const report merged = merge(explore_shards(args, dir), dir);
  EXPECT_EQ(merged.code, whole.code) << name;
  EXPECT_EQ(merged.table, whole.table) << name;
  EXPECT_EQ(merged.rows, whole.rows) << name;
  EXPECT_EQ(merged.junit, whole.junit) << name;
}

TEST(ShardMerge, FourShardsOfAllAreTheUnshardedTable) {
  // Breaking rows stop at their first finding (b4 at seed 40: in the last shard, the others
  // ran past it); b8 and b11 find nothing in 40 runs and two safe rows are unexercised: exit 1.
  expect_merge_is_the_unsharded_search({"--all", "--runs", "40"}, "all");
}

TEST(ShardMerge, FindingsOnManySeedsSumAndKeepTheTenLowestSeedsTraces) {
  expect_merge_is_the_unsharded_search(
      {"--scenario", "b2_early_ack", "--variant", "B2", "--runs", "120"}, "b2");
}

TEST(ShardMerge, AStopAtFirstSearchCountsTheSeedsUpToTheLowestFinding) {
  expect_merge_is_the_unsharded_search(
      {"--scenario", "b4_sibling_futures", "--variant", "B4", "--runs", "400", "--stop-at-first"},
      "b4");
}

// --- bad input: one line, exit 2 (an input_error or usage_error), nothing written ---

struct ShardMergeRefuses : ::testing::Test {
  // A directory per test: ctest runs them as processes side by side.
  void SetUp() override {
    dir = fresh_dir(std::string("merge_bad_") +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (int i = 0; i < 2; ++i) {
      const std::string shard = std::to_string(i) + "/2";
      call(cmd_explore, {"--scenario", "page42", "--variant", "B1", "--runs", "6", "--shard", shard,
                         "--json", (dir / ("s" + std::to_string(i) + ".json")).string()});
    }
    call(cmd_explore, {"--scenario", "b2_early_ack", "--runs", "6", "--shard", "1/2", "--json",
                       (dir / "other1.json").string()});
    call(cmd_explore, {"--scenario", "page42", "--runs", "6", "--shard", "1/3", "--json",
                       (dir / "third1.json").string()});
    call(cmd_explore, {"--scenario", "page42", "--strategy", "dpor", "--runs", "5", "--json",
                       (dir / "dpor.json").string()});
    std::ofstream(dir / "garbage.json") << "not json at all";
    std::ofstream(dir / "empty.json") << "[]";
    // A row edited by hand: its result no longer follows from its counts.
    auto rows = nlohmann::json::parse(read(dir / "s1.json"));
    rows[0]["result"] = "clean";
    std::ofstream(dir / "edited1.json") << rows.dump();
  }

  // The merge of `files` must be refused with one line, writing nothing.
  void expect_refused(const std::vector<std::string>& files, const std::string& says) const {
    const fs::path out = dir / "merged.json";
    fs::remove(out);
    std::vector<std::string> args{"--json", out.string()};
    for (const std::string& f : files) args.push_back((dir / f).string());
    try {
      call(cmd_merge, args);
      ADD_FAILURE() << "merged " << ::testing::PrintToString(files);
    } catch (const std::runtime_error& e) {  // input_error, usage_error: main() exits 2
      const std::string what = e.what();
      EXPECT_TRUE(dynamic_cast<const input_error*>(&e) || dynamic_cast<const usage_error*>(&e))
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
    EXPECT_FALSE(fs::exists(out)) << ::testing::PrintToString(files);
  }

  fs::path dir;
};

TEST_F(ShardMergeRefuses, AMissingShard) { expect_refused({"s0.json"}, "shard 1/2 is missing"); }
TEST_F(ShardMergeRefuses, ADuplicatedShard) {
  expect_refused({"s0.json", "s1.json", "s1.json"}, "are both shard 1/2");
}
TEST_F(ShardMergeRefuses, ShardsOfAnotherSplit) {
  expect_refused({"s0.json", "third1.json"}, "share N");
}
TEST_F(ShardMergeRefuses, MismatchedRows) {
  expect_refused({"s0.json", "other1.json"}, "has no row");
}
TEST_F(ShardMergeRefuses, NotJson) { expect_refused({"s0.json", "garbage.json"}, "not JSON"); }
TEST_F(ShardMergeRefuses, NoSuchFile) {
  expect_refused({"s0.json", "missing.json"}, "no such merge input file");
}
TEST_F(ShardMergeRefuses, NoRows) { expect_refused({"empty.json"}, "no rows"); }
TEST_F(ShardMergeRefuses, DporRowsDoNotShard) { expect_refused({"dpor.json"}, "does not shard"); }
TEST_F(ShardMergeRefuses, AnEditedRow) {
  expect_refused({"s0.json", "edited1.json"}, "\"result\" does not read back");
}
TEST_F(ShardMergeRefuses, NoFiles) { expect_refused({}, "expected the shards"); }

TEST(ShardMerge, AnInterruptedShardIsNoVerdict) {
  // Every expectation held in what ran, but a shard was cut short: exit 1, the row marked.
  const fs::path dir = fresh_dir("merge_interrupted");
  std::vector<std::string> files;
  for (const char* shard : {"0/2", "1/2"}) {
    files.push_back((dir / (std::string("s") + shard[0] + ".json")).string());
    ASSERT_EQ(call(cmd_explore, {"--scenario", "page42", "--runs", "6", "--shard", shard, "--json",
                                 files.back()})
                  .code,
              0);
  }
  EXPECT_EQ(call(cmd_merge, files).code, 0);
  auto rows = nlohmann::json::parse(read(files[1]));
  rows[0]["interrupted"] = true;
  std::ofstream(files[1]) << rows.dump();
  const captured c = call(cmd_merge, files);
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.out.find("[interrupted]"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("1 search(es) interrupted in a shard; every expectation held"),
            std::string::npos)
      << c.out;
}

// A row of shard `index` of 2 that stops at its first finding of I1, with findings at `seeds`.
explore_row stopping_row(std::uint64_t index,
                         const std::vector<std::pair<std::uint64_t, std::string>>& seeds) {
  explore_row row;
  row.ran = true;
  row.expected = expectation::found;
  row.request.spec.name = "s";
  row.request.variant_label = "B1";
  row.request.shard = {index, 2};
  row.request.stop_at_first_finding = true;
  row.request.wanted_invariant = "I1";
  search_result& r = row.result;
  for (const auto& [seed, invariant] : seeds) {
    ++r.findings;
    r.finding_seeds.push_back({seed, invariant});
    if (invariant != "I1" && !r.first_other) {
      ++r.other_findings;
      r.first_other = sim::finding{invariant, "other at " + std::to_string(seed), {}, {}};
      r.first_other_seed = seed;
    } else if (invariant != "I1") {
      ++r.other_findings;
    } else {
      r.first = sim::finding{invariant, "wanted at " + std::to_string(seed), {}, {}};
      r.first_seed = seed;
      r.seconds_to_first_finding = 0;
      r.runs = shard_seeds_up_to(row.request.shard, seed);
      r.runs_to_first_finding = r.runs;
    }
  }
  return row;
}

TEST(ShardMerge, OtherFindingsCountUpToTheLowestWantedOne) {
  // Shard 0 (seeds 1, 3, 5, ...) stops at I1 on seed 5 after an I3 on seed 1; shard 1 (2, 4,
  // ...) ran on to its own I1 on seed 8, past I3s on seeds 2, 4 and 6. Unsharded, the search
  // stops at seed 5: 5 runs, findings on 1, 2, 4 and 5, three of them other.
  const std::vector<shard_rows> shards{
      {"a.json", {stopping_row(0, {{1, "I3"}, {5, "I1"}})}},
      {"b.json", {stopping_row(1, {{2, "I3"}, {4, "I3"}, {6, "I3"}, {8, "I1"}})}}};
  const std::vector<explore_row> merged = merge_shards(shards);
  ASSERT_EQ(merged.size(), 1u);
  const search_result& r = merged[0].result;
  EXPECT_TRUE(merged[0].stopped_at_first_finding());
  EXPECT_EQ(r.runs, 5u);
  EXPECT_EQ(r.runs_to_first_finding, 5u);
  EXPECT_EQ(r.first_seed, 5u);
  EXPECT_EQ(r.findings, 4u);
  EXPECT_EQ(r.other_findings, 3u);
  EXPECT_EQ(r.first_other_seed, 1u);
  std::vector<std::uint64_t> seeds;
  for (const auto& f : r.finding_seeds) seeds.push_back(f.seed);
  EXPECT_EQ(seeds, (std::vector<std::uint64_t>{1, 2, 4, 5}));
}

TEST(ShardMerge, TraceSeedsComeFromTheirFileNames) {
  EXPECT_EQ(trace_seed("t/b2_early_ack.B2.random.seed117.json"), 117u);
  EXPECT_EQ(trace_seed("t/x.seed3.json.seed12.json"), 12u);
  EXPECT_THROW(trace_seed("t/page42.B1.dpor.run3.json"), input_error);
}

}  // namespace
}  // namespace kvsim::tools::shard_merge_test
