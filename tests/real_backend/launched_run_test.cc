// Ranks that torchrun or srun started (launched_run.h): which environments may run a transfer
// scenario's rank, and the shared memory they find each other's pages in
// (launched_region.h): named from the run's key and MASTER_PORT, created exclusively with mode
// 600, opened only when it is this user's alone, and its name removed by its owner. The two
// processes of a real launch are tests/real_backend/launched_ranks_test.sh.
#include "real_backend/launch/launched_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cstring>
#include <functional>
#include <map>
#include <regex>
#include <string>

#include "real_backend/errors.h"
#include "real_backend/launch/launched_region.h"
#include "real_backend/host/shared_region.h"

namespace kvsim::real::launched_run_test {
namespace {

launch_config config(const std::map<std::string, std::string>& vars) {
  return launched_rank_config([&](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const launch_error& e) {
    return std::string("launch_error: ") + e.what();
  } catch (const real_backend_error& e) {
    return e.what();
  }
  return "accepted";
}

bool exists(const std::string& name) {
  struct stat st {};
  return stat(("/dev/shm" + name).c_str(), &st) == 0;
}

TEST(LaunchedRun, TorchrunsAndSlurmsTwoRanksAreTaken) {
  const launch_config t = config(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}});
  EXPECT_EQ(t.source, launch_source::torchrun);
  EXPECT_EQ(t.rank, 1u);
  EXPECT_EQ(t.rendezvous_port, 29501);  // torchrun's store holds MASTER_PORT
  const launch_config s = config({{"SLURM_PROCID", "0"},
                                  {"SLURM_NTASKS", "2"},
                                  {"MASTER_ADDR", "127.0.0.1"},
                                  {"MASTER_PORT", "29500"}});
  EXPECT_EQ(s.source, launch_source::slurm);
  EXPECT_EQ(s.rendezvous_port, 29500);
}

TEST(LaunchedRun, AnythingButTwoRanksWithAMasterIsRefused) {
  const std::map<std::string, std::string> master = {{"MASTER_ADDR", "127.0.0.1"},
                                                     {"MASTER_PORT", "29500"}};
  const auto with = [&](std::map<std::string, std::string> vars) {
    vars.insert(master.begin(), master.end());
    return refusal([&] { (void)config(vars); });
  };
  EXPECT_EQ(with({}),
            "launch_error: launcher: --launched runs as one rank of a torchrun or srun launch, "
            "but neither RANK and WORLD_SIZE nor SLURM_PROCID and SLURM_NTASKS are set");
  EXPECT_EQ(with({{"RANK", "0"}, {"WORLD_SIZE", "4"}}),
            "launch_error: launcher: a transfer scenario runs as 2 ranks (prefill 0, decode 1), "
            "but WORLD_SIZE is 4");
  EXPECT_EQ(with({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}),
            "launch_error: launcher: a transfer scenario runs as 2 ranks (prefill 0, decode 1), "
            "but SLURM_NTASKS is 1");
  EXPECT_EQ(with({{"RANK", "2"}, {"WORLD_SIZE", "2"}}),
            "launch_error: launcher: RANK 2 is not below WORLD_SIZE 2");
  EXPECT_EQ(refusal([] {
              (void)config({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}});
            }).rfind("launch_error: launcher: MASTER_ADDR is not set for a launch of 2 ranks", 0),
            0u);
  EXPECT_EQ(
      refusal([] {
        (void)config({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "10.0.0.1"}});
      }).rfind("launch_error: launcher: MASTER_PORT is not set (srun sets none", 0),
      0u);
}

TEST(LaunchedRun, TheMemorysNameComesFromTheKeyAndThePortAndShowsNeither) {
  const run_secret key = draw_run_secret();
  const std::string name = launched_region_name(key, 29500);
  EXPECT_TRUE(std::regex_match(name, std::regex("/kvsim-hp-[0-9a-f]{16}-29500"))) << name;
  EXPECT_EQ(launched_region_name(key, 29500), name);
  EXPECT_NE(launched_region_name(draw_run_secret(), 29500), name);
  EXPECT_EQ(launched_region_name(key, 29501).substr(0, 26), name.substr(0, 26));
  const std::string hex = to_hex(key);
  for (std::size_t i = 0; i + 8 <= hex.size(); ++i) {
    EXPECT_EQ(name.find(hex.substr(i, 8)), std::string::npos) << "the key shows in the name";
  }
}

TEST(LaunchedRun, TheMemoryIsCreatedExclusivelyForItsOwnerAndItsNameRemoved) {
  const std::string name = launched_region_name(draw_run_secret(), 1);
  {
    shared_region made = shared_region::create_named(name, 1 << 20);
    region_name_owner owner(name);
    ASSERT_TRUE(exists(name));
    struct stat st {};
    ASSERT_EQ(stat(("/dev/shm" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(refusal([&] { (void)shared_region::create_named(name, 1 << 20); }),
              "launch_error: launcher: the host data plane's shared memory /dev/shm" + name +
                  " exists already (another run with this key and MASTER_PORT, or one killed "
                  "before its rank 1 started; remove it if no run uses it)");
    ASSERT_TRUE(exists(name)) << "the refused creation removed the run's memory";
    // The other rank's mapping is the same memory.
    shared_region opened = shared_region::open_named(name);
    std::memcpy(made.carve("words/x", 8).data(), "kvsimhp", 8);
    EXPECT_EQ(std::memcmp(opened.carve("words/x", 8).data(), "kvsimhp", 8), 0);
    owner.remove();
    EXPECT_FALSE(exists(name));  // both mappings live on without it
    EXPECT_EQ(std::memcmp(opened.carve("words/x", 8).data(), "kvsimhp", 8), 0);
    shared_region again = shared_region::create_named(name, 1 << 20);  // the name is free
    region_name_owner again_owner(name);
  }
  EXPECT_FALSE(exists(name)) << "the owner's destructor left the name";
}

TEST(LaunchedRun, OnlyThisUsersOwnMemoryIsOpened) {
  const std::string name = launched_region_name(draw_run_secret(), 2);
  EXPECT_EQ(refusal([&] { (void)shared_region::open_named(name); }),
            "host data plane: no shared memory /dev/shm" + name +
                " on this machine (rank 0 makes it on its own: both ranks of --data-plane host "
                "must run on one machine)");
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  fchmod(fd, 0644);  // whatever the umask: open to others
  close(fd);
  region_name_owner owner(name);
  EXPECT_EQ(
      refusal([&] { (void)shared_region::open_named(name); }),
      "host data plane: /dev/shm" + name + " is not this user's alone (owner or mode): refused");
}

TEST(LaunchedRun, AnObjectThatIsNoRegionIsRefused) {
  const std::string name = launched_region_name(draw_run_secret(), 3);
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);  // zeros: no directory
  close(fd);
  region_name_owner owner(name);
  EXPECT_NE(refusal([&] {
              (void)shared_region::open_named(name);
            }).find("is not a host data plane region"),
            std::string::npos);
}

// Runs `body` in a child process and returns its wait status; the child exits 0 if `body`
// returns.
int status_of_child(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// How torchrun and srun stop a job: the owner removes the name, and the process still dies
// of the signal (exit status 128 + 15 in a shell). launched_ranks_test.sh's rank0_terminated
// does the same to a rank 0 waiting for rank 1, with SIGINT and SIGHUP too.
TEST(LaunchedRun, SigtermRemovesTheNameAndStillKills) {
  const std::string name = launched_region_name(draw_run_secret(), 4);
  const int status = status_of_child([&] {
    shared_region made = shared_region::create_named(name, 1 << 20);
    region_name_owner owner(name);
    raise(SIGTERM);
    _exit(7);  // not reached
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(exists(name)) << "the signal left the name";
  shm_unlink(name.c_str());
}

// A signal between creating the memory and its owner taking the name waits for the owner.
TEST(LaunchedRun, ASignalBeforeTheOwnerTakesTheNameWaitsForIt) {
  const std::string name = launched_region_name(draw_run_secret(), 5);
  const int status = status_of_child([&] {
    termination_signals_held held;
    shared_region made = shared_region::create_named(name, 1 << 20);
    raise(SIGTERM);  // pending: held back
    region_name_owner owner(name);
    held.release();
    _exit(7);  // not reached
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(exists(name)) << "the signal left the name";
  shm_unlink(name.c_str());
}

}  // namespace
}  // namespace kvsim::real::launched_run_test
