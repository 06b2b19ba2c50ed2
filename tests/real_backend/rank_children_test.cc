// The rank processes a `--ranks N` parent starts (rank_spawn.h), with this test binary in the
// part of the rank: spawn_rank_process starts /proc/self/exe, which is this binary here, and
// a child started with KVSIM_TEST_RANK_PART set plays that part (below, before any test runs)
// instead of running the tests. So the parent's side runs as in production, and the child's
// side reports what only the child can see.
//   - A child dies with its parent (PR_SET_PDEATHSIG, SIGKILL) and holds no run key: it took
//     KVSIM_RUN_KEY out of its environment as `kvsim real` starts, and /proc/PID/environ no
//     longer shows it.
//   - A rank that dies while the run starts is named, with how it ended, within a second,
//     instead of the parent waiting out its patience for the other rank.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "core/variant.h"
#include "real_backend/errors.h"
#include "real_backend/launch/process_launch.h"
#include "real_backend/launch/rank_spawn.h"
#include "real_backend/real_command.h"
#include "real_backend/wire/run_secret.h"
#include "tests/real_backend/catalogue_lookup.h"

namespace kvsim::real::rank_children_test {
namespace {

using namespace std::chrono_literals;

constexpr const char* part_variable = "KVSIM_TEST_RANK_PART";

void say(int fd, const std::string& line) {
  const std::string out = line + "\n";
  (void)!::write(fd, out.data(), out.size());
}

// Until the parent says "exit" or goes away.
void wait_for_exit(int fd) {
  std::string seen;
  char c = 0;
  while (::read(fd, &c, 1) == 1) {
    seen += c;
    if (seen.find("exit\n") != std::string::npos) return;
  }
}

// The child's parts. "report": start as `kvsim real` does (here with --help, which needs
// nothing else), then say what this process's parent-death signal is and whether the key is
// still in its environment. "decode_dies": rank 1 says "listening" and is killed at once; rank
// 0 waits to be told to exit, as a prefill rank caught connecting to it would.
[[noreturn]] void play(const std::string& part, int fd) {
  if (part == "report") {
    std::ostringstream out;
    std::ostringstream err;
    (void)run_real_command({"--help"}, out, err);
    int signal_on_parent_death = 0;
    ::prctl(PR_GET_PDEATHSIG, &signal_on_parent_death);
    say(fd, "pdeathsig " + std::to_string(signal_on_parent_death) + "; KVSIM_RUN_KEY " +
                (std::getenv("KVSIM_RUN_KEY") != nullptr ? "set" : "unset"));
    wait_for_exit(fd);
    ::_exit(0);
  }
  if (part == "decode_dies") {
    const char* rank = std::getenv("RANK");
    if (rank != nullptr && std::string(rank) == "1") {
      say(fd, "listening");
      ::raise(SIGKILL);
    }
    wait_for_exit(fd);
    ::_exit(0);
  }
  ::_exit(125);
}

const bool played_a_part = [] {
  const char* part = std::getenv(part_variable);
  const char* fd = std::getenv("KVSIM_SCRIPT_FD");
  if (part != nullptr && fd != nullptr) play(part, std::atoi(fd));
  return false;
}();

// The test process's environment holds the part only while it starts its children.
struct part_for_children {
  explicit part_for_children(const char* part) { ::setenv(part_variable, part, 1); }
  ~part_for_children() { ::unsetenv(part_variable); }
};

std::string environ_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(RankChildren, DieWithTheirParentAndHoldNoKey) {
  ASSERT_FALSE(played_a_part);
  const run_secret secret = draw_run_secret();
  std::string hex = to_hex(secret);
  spawned_rank child;
  {
    const part_for_children part("report");
    child = spawn_rank_process("the reporting rank's process", {1, 2, 0, -1}, secret);
  }
  std::string failure;
  try {
    child.rank->expect("pdeathsig 9; KVSIM_RUN_KEY unset", 10'000ms);
    const std::string environment = environ_of(child.pid);
    EXPECT_FALSE(environment.empty());
    EXPECT_EQ(environment.find(hex), std::string::npos) << "the key is in /proc/PID/environ";
    EXPECT_EQ(environment.find("KVSIM_RUN_KEY"), std::string::npos);
    EXPECT_NE(environment.find("RANK=1"), std::string::npos);  // what it may keep, it keeps
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  end_rank_processes({&child}, failure);
  EXPECT_EQ(failure, "");
  wipe(hex);
}

TEST(RankChildren, ARankThatDiesAsTheRunStartsIsNamedWithinASecond) {
  const scenarios::scenario_spec spec = testing::from_catalogue("page42");
  const part_for_children part("decode_dies");
  const auto started = std::chrono::steady_clock::now();
  std::string line = "nothing thrown";
  try {
    (void)run_transfer_processes(spec, core::variant::safe(), "safe");
  } catch (const real_backend_error& e) {
    line = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(line.rfind("the decode rank's process (pid ", 0), 0u) << line;
  EXPECT_NE(line.find(") was killed by signal 9 ("), std::string::npos) << line;
  // Not the 20 s a rank's start may take: the parent watches both processes as it waits.
  EXPECT_LT(took, 3s) << line;
}

}  // namespace
}  // namespace kvsim::real::rank_children_test
