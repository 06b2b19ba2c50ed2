// The launcher reads its place in a launch from torchrun's or Slurm's variables, falls back to
// one rank on loopback, and refuses a malformed value with one line naming the variable.
#include "real_backend/launch/launcher.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "real_backend/errors.h"

namespace kvsim::real::launcher_test {
namespace {

launch_config parse(const std::map<std::string, std::string>& vars) {
  return parse_launch_environment([&](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    (void)parse(vars);
  } catch (const launch_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Launcher, NothingSetIsOneRankOnLoopback) {
  const launch_config c = parse({});
  EXPECT_EQ(c.source, launch_source::single);
  EXPECT_EQ(c.rank, 0u);
  EXPECT_EQ(c.world_size, 1u);
  EXPECT_EQ(c.local_rank, 0u);
  EXPECT_EQ(c.master_addr, "127.0.0.1");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_EQ(c.rendezvous_port, 29500);
}

TEST(Launcher, ReadsTorchrunVariables) {
  const launch_config c = parse({{"RANK", "5"},
                                 {"WORLD_SIZE", "8"},
                                 {"LOCAL_RANK", "1"},
                                 {"MASTER_ADDR", "node-a"},
                                 {"MASTER_PORT", "31000"}});
  EXPECT_EQ(c.source, launch_source::torchrun);
  EXPECT_EQ(c.rank, 5u);
  EXPECT_EQ(c.world_size, 8u);
  EXPECT_EQ(c.local_rank, 1u);
  EXPECT_EQ(c.master_addr, "node-a");
  EXPECT_EQ(c.master_port, 31000);
  EXPECT_EQ(c.rendezvous_port, 31001) << "torchrun's own store listens on MASTER_PORT";
  EXPECT_EQ(describe(c), "rank 5 of 8 (torchrun, local rank 1), rendezvous at node-a:31001");
}

TEST(Launcher, ReadsSlurmVariablesWithTheExportedRendezvous) {
  const launch_config c = parse({{"SLURM_PROCID", "3"},
                                 {"SLURM_NTASKS", "4"},
                                 {"SLURM_LOCALID", "3"},
                                 {"MASTER_ADDR", "10.0.0.7"}});
  EXPECT_EQ(c.source, launch_source::slurm);
  EXPECT_EQ(c.rank, 3u);
  EXPECT_EQ(c.world_size, 4u);
  EXPECT_EQ(c.local_rank, 3u);
  EXPECT_EQ(c.master_addr, "10.0.0.7");
  EXPECT_EQ(c.master_port, default_master_port);
  EXPECT_EQ(c.rendezvous_port, default_master_port);
}

TEST(Launcher, KvsimsRendezvousPortCanBeChosen) {
  const launch_config c = parse({{"RANK", "0"},
                                 {"WORLD_SIZE", "2"},
                                 {"MASTER_ADDR", "h"},
                                 {"KVSIM_RENDEZVOUS_PORT", "40000"}});
  EXPECT_EQ(c.rendezvous_port, 40000);
}

TEST(Launcher, TorchrunWinsInsideASlurmAllocation) {
  const launch_config c = parse({{"SLURM_PROCID", "0"},
                                 {"SLURM_NTASKS", "2"},
                                 {"RANK", "1"},
                                 {"WORLD_SIZE", "2"},
                                 {"MASTER_ADDR", "h"}});
  EXPECT_EQ(c.source, launch_source::torchrun);
  EXPECT_EQ(c.rank, 1u);
}

TEST(Launcher, ASingleSlurmTaskNeedsNoRendezvous) {
  const launch_config c = parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  EXPECT_EQ(c.source, launch_source::slurm);
  EXPECT_EQ(c.master_addr, "127.0.0.1");
}

TEST(Launcher, MalformedValuesAreOneLineNamingTheVariable) {
  const std::map<std::string, std::map<std::string, std::string>> cases{
      {"launcher: RANK must be a non-negative decimal integer (got 'one')",
       {{"RANK", "one"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}},
      {"launcher: RANK must be a non-negative decimal integer (got '-1')",
       {{"RANK", "-1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}},
      {"launcher: WORLD_SIZE is set but empty (got '')", {{"RANK", "0"}, {"WORLD_SIZE", ""}}},
      {"launcher: WORLD_SIZE is not set, but RANK is", {{"RANK", "0"}}},
      {"launcher: RANK is not set, but WORLD_SIZE is", {{"WORLD_SIZE", "2"}}},
      {"launcher: RANK 2 is not below WORLD_SIZE 2",
       {{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}},
      {"launcher: WORLD_SIZE must be at least 1 (got '0')", {{"RANK", "0"}, {"WORLD_SIZE", "0"}}},
      {"launcher: LOCAL_RANK 4 is not below WORLD_SIZE 2",
       {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "4"}, {"MASTER_ADDR", "h"}}},
      {"launcher: RANK must be at most 4294967295 (got '99999999999')",
       {{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}}},
      {"launcher: MASTER_PORT must be at most 65535 (got '70000')", {{"MASTER_PORT", "70000"}}},
      {"launcher: MASTER_PORT must be 1..65535 (got '0')", {{"MASTER_PORT", "0"}}},
      {"launcher: MASTER_PORT must be a non-negative decimal integer (got '29500x')",
       {{"MASTER_PORT", "29500x"}}},
      {"launcher: MASTER_ADDR is set but empty", {{"MASTER_ADDR", ""}}},
      {"launcher: KVSIM_RENDEZVOUS_PORT must be a non-negative decimal integer (got 'p')",
       {{"KVSIM_RENDEZVOUS_PORT", "p"}}},
      {"launcher: SLURM_NTASKS is not set, but SLURM_PROCID is", {{"SLURM_PROCID", "0"}}},
      {"launcher: SLURM_LOCALID must be a non-negative decimal integer (got 'x')",
       {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "x"}}},
  };
  for (const auto& [expected, vars] : cases) {
    const std::string got = error_of(vars);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(got.find('\n'), std::string::npos);
  }
}

// Found by tests/fuzz/launcher_env_fuzz.cc: the value was printed as it was, so a newline or
// carriage return in it broke the one-line error, and a long one made a long line.
TEST(Launcher, AMalformedValueIsShownEscapedAndShort) {
  EXPECT_EQ(error_of({{"RANK", "9\r\r"}, {"WORLD_SIZE", "1"}}),
            "launcher: RANK must be a non-negative decimal integer (got '9\\x0d\\x0d')");
  EXPECT_EQ(error_of({{"MASTER_PORT", "1\n2"}}),
            "launcher: MASTER_PORT must be a non-negative decimal integer (got '1\\x0a2')");
  EXPECT_EQ(error_of({{"RANK", std::string(100'000, 'r')}, {"WORLD_SIZE", "1"}}),
            "launcher: RANK must be a non-negative decimal integer (got '" +
                std::string(57, 'r') + "...')");
}

TEST(Launcher, ManyRanksWithoutARendezvousAddressSayHowToSetIt) {
  const std::string got = error_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  EXPECT_NE(got.find("MASTER_ADDR is not set for a launch of 2 ranks"), std::string::npos) << got;
  EXPECT_NE(got.find("scontrol show hostnames"), std::string::npos) << got;
}

}  // namespace
}  // namespace kvsim::real::launcher_test
