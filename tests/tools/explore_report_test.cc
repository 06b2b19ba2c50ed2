// What `kvsim explore` reports does not depend on how it was run: --jobs, shards, timing.
// And every finding it reports says where its trace is and how to reproduce it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/tools/cli_call.h"
#include "tools/kvsim/seed_plan.h"

namespace kvsim::tools::explore_report_test {
namespace {

namespace fs = std::filesystem;
using testing::call;
using testing::captured;
using testing::fresh_dir;
using testing::read;

// The table without what depends on the clock or names --jobs: "0.012s" and "jobs 4".
std::string without_timing(const std::string& table) {
  return std::regex_replace(std::regex_replace(table, std::regex(R"([0-9]+\.[0-9]+s)"), "T"),
                            std::regex(R"(jobs [0-9]+)"), "jobs J");
}

// The JSON rows without their clock readings.
nlohmann::json without_seconds(nlohmann::json rows) {
  for (auto& row : rows) {
    row.erase("seconds");
    row.erase("seconds_to_first_finding");
  }
  return rows;
}

std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

struct explored {
  captured run;
  nlohmann::json rows;
  std::set<std::string> traces;
};

// The search of `args` with --jobs `jobs`, its traces in a directory of their own.
explored explore_with_jobs(std::vector<std::string> args, int jobs, const std::string& name) {
  const fs::path dir = fresh_dir(name + "_jobs" + std::to_string(jobs));
  for (const std::string& extra :
       {std::string("--jobs"), std::to_string(jobs), std::string("--out"), (dir / "traces").string(),
        std::string("--json"), (dir / "rows.json").string()}) {
    args.push_back(extra);
  }
  explored e;
  e.run = call(cmd_explore, args);
  e.rows = nlohmann::json::parse(read(dir / "rows.json"));
  e.traces = file_names(dir / "traces");
  // Paths name the directory of this run; compare by file name.
  for (auto& row : e.rows) {
    for (auto& t : row["traces"]) t = fs::path(t.get<std::string>()).filename().string();
    for (const char* key : {"first_finding", "first_other_finding"}) {
      if (!row.contains(key) || row[key].is_null()) continue;
      row[key].erase("reproduce");
      if (!row[key]["trace"].is_null()) {
        row[key]["trace"] = fs::path(row[key]["trace"].get<std::string>()).filename().string();
      }
    }
  }
  std::string table = e.run.out;
  e.run.out = std::regex_replace(table, std::regex(dir.string() + "/traces/"), "DIR/");
  return e;
}

void expect_same_report(const std::vector<std::string>& args, const std::string& name) {
  const explored one = explore_with_jobs(args, 1, name);
  for (const int jobs : {2, 4}) {
    const explored many = explore_with_jobs(args, jobs, name);
    EXPECT_EQ(many.run.code, one.run.code) << jobs;
    EXPECT_EQ(without_timing(many.run.out), without_timing(one.run.out)) << "--jobs " << jobs;
    EXPECT_EQ(without_seconds(many.rows), without_seconds(one.rows)) << "--jobs " << jobs;
    EXPECT_EQ(many.traces, one.traces) << "--jobs " << jobs;
  }
}

TEST(ExploreReport, JobsDoNotChangeTheTableTheRowsOrTheTraces) {
  // Findings on most seeds: the traces kept must be the 10 lowest seeds', whoever ran them.
  expect_same_report({"--scenario", "b2_early_ack", "--variant", "B2", "--runs", "120"}, "b2");
  // A search that stops at its first finding (not at seed 1): it counts the seeds up to the
  // lowest finding seed, though other workers ran past it.
  expect_same_report({"--scenario", "b4_sibling_futures", "--variant", "B4", "--runs", "400",
                      "--stop-at-first"},
                     "b4");
}

TEST(ExploreReport, JobsDoNotChangeTheAllTable) {
  expect_same_report({"--all", "--runs", "40"}, "all");
}

TEST(ExploreReport, TheFirstFindingIsTheLowestSeedAndCountsTheRunsUpToIt) {
  const explored e = explore_with_jobs(
      {"--scenario", "b4_sibling_futures", "--variant", "B4", "--runs", "400", "--stop-at-first"}, 4,
      "lowest");
  const auto& row = e.rows.at(0);
  const auto seed = row.at("first_finding").at("seed").get<std::uint64_t>();
  EXPECT_GT(seed, 1u) << "pick a scenario whose first finding is not at seed 1";
  EXPECT_EQ(row.at("runs").get<std::uint64_t>(), seed);
  EXPECT_EQ(row.at("runs_to_first_finding").get<std::uint64_t>(), seed);
  for (const auto& f : row.at("finding_seeds")) EXPECT_LE(f.at("seed").get<std::uint64_t>(), seed);
}

TEST(ExploreReport, EveryFindingSaysWhereItsTraceIsAndHowToReproduceIt) {
  const fs::path dir = fresh_dir("reproduce");
  const captured c = call(cmd_explore, {"--scenario", "b3_source_reuse", "--variant", "B3", "--runs",
                                        "60", "--out", (dir / "t").string(), "--json",
                                        (dir / "rows.json").string(), "--junit",
                                        (dir / "junit.xml").string()});
  ASSERT_EQ(c.code, 0) << c.out;
  const auto finding = nlohmann::json::parse(read(dir / "rows.json")).at(0).at("first_finding");
  const std::string trace = finding.at("trace").get<std::string>();
  EXPECT_TRUE(fs::exists(trace)) << trace;
  const auto commands = finding.at("reproduce").get<std::vector<std::string>>();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0], "kvsim replay " + trace);
  const std::string seed = std::to_string(finding.at("seed").get<int>());
  EXPECT_EQ(commands[1], "kvsim run --scenario b3_source_reuse --variant B3 --strategy random --seed " +
                             seed + " --trace TRACE.json");
  EXPECT_NE(c.out.find("  trace:     " + trace), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("  reproduce: " + commands[1]), std::string::npos) << c.out;
  const std::string junit = read(dir / "junit.xml");
  EXPECT_NE(junit.find("reproduce: " + commands[0]), std::string::npos) << junit;

  // The run form reproduces the same finding.
  const captured again = call(cmd_run, {"--scenario", "b3_source_reuse", "--variant", "B3", "--seed", seed});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find(finding.at("message").get<std::string>()), std::string::npos) << again.out;
}

TEST(ExploreReport, ShardsNameTheirJunitSuites) {
  const fs::path dir = fresh_dir("junit_shards");
  std::set<std::string> suites;
  for (const char* shard_text : {"0/2", "1/2"}) {
    const std::string shard = shard_text;
    const fs::path file = dir / (shard == "0/2" ? "j0.xml" : "j1.xml");
    ASSERT_EQ(call(cmd_explore, {"--scenario", "page42", "--runs", "10", "--shard", shard, "--junit",
                                 file.string()})
                  .code,
              0);
    const std::string xml = read(file);
    EXPECT_NE(xml.find("<testsuite name=\"kvsim explore shard " + shard + "\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("shard " + shard + "]\""), std::string::npos) << xml;
  }
}

TEST(ExploreReport, CleanSearchesShareTheBudgetEvenly) {
  const fs::path dir = fresh_dir("budget");
  const captured c = call(cmd_explore, {"--all", "--budget", "3s", "--json", (dir / "rows.json").string()});
  // Whether every breaking row found its bug in its share depends on the build's speed (the
  // asan build is slower); how the budget was shared does not.
  ASSERT_LE(c.code, 1) << c.out;
  const auto rows = nlohmann::json::parse(read(dir / "rows.json"));
  // The order they ran in: the breaking searches, then the clean ones, each in table order.
  std::vector<nlohmann::json> run_order;
  for (const auto& row : rows) {
    if (row.at("expected") != "clean") run_order.push_back(row);
  }
  const std::size_t breaking = run_order.size();
  for (const auto& row : rows) {
    if (row.at("expected") == "clean") run_order.push_back(row);
  }
  ASSERT_GT(run_order.size() - breaking, 2u);
  // Breaking searches: an even share of the whole. Clean ones: what is left after every search
  // before them (the seconds each reported), evenly over the rest. Checked against the
  // seconds each search reports, not against one another: a search that overran its share (a
  // slow build) shrinks the shares after it, and must.
  const double total = 3.0;
  double spent = 0;
  for (std::size_t k = 0; k < run_order.size(); ++k) {
    const auto& row = run_order[k];
    const double expected_share =
        k < breaking ? total / static_cast<double>(run_order.size())
                     : std::max(0.001, (total - spent) / static_cast<double>(run_order.size() - k));
    EXPECT_NEAR(row.at("budget_seconds").get<double>(), expected_share, 1e-9)
        << row.at("scenario") << " " << row.at("variant") << " (run " << k << ")";
    spent += row.at("seconds").get<double>();
  }
}

TEST(SeedPlan, ShardSeedsUpToASeedSumToTheSeed) {
  for (std::uint64_t count = 1; count <= 5; ++count) {
    for (std::uint64_t seed = 0; seed <= 40; ++seed) {
      std::uint64_t total = 0;
      for (std::uint64_t index = 0; index < count; ++index) {
        const shard_spec shard{index, count};
        std::uint64_t by_plan = 0;
        seed_plan plan(shard, 0, 1, seed);
        while (plan.next()) ++by_plan;
        EXPECT_EQ(shard_seeds_up_to(shard, seed), by_plan) << index << "/" << count << " " << seed;
        total += by_plan;
      }
      EXPECT_EQ(total, seed);
    }
  }
}

}  // namespace
}  // namespace kvsim::tools::explore_report_test
