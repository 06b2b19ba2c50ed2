#include "real_backend/rank_spawn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "real_backend/errors.h"
#include "real_backend/launcher.h"
#include "real_backend/shared_region.h"
#include "real_backend/step_channel.h"

extern char** environ;

namespace kvsim::real {
namespace {

constexpr auto exit_patience = std::chrono::milliseconds(10'000);

std::string errno_line(const char* call) {
  return std::string(call) + " failed: " + std::strerror(errno);
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string arg;
  for (const char c : all) {
    if (c == '\0') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  if (args.empty()) throw real_backend_error("cannot read this process's own arguments");
  return args;
}

bool replaced(const std::string& entry) {
  static const char* const ours[] = {"RANK=",
                                     "WORLD_SIZE=",
                                     "LOCAL_RANK=",
                                     "MASTER_ADDR=",
                                     "MASTER_PORT=",
                                     "KVSIM_RUN_KEY=",
                                     "KVSIM_HOST_PLANE_FD=",
                                     "KVSIM_SCRIPT_FD=",
                                     "KVSIM_RENDEZVOUS_PORT=",
                                     "SLURM_PROCID=",
                                     "SLURM_NTASKS=",
                                     "SLURM_LOCALID="};
  for (const char* v : ours) {
    if (entry.rfind(v, 0) == 0) return true;
  }
  return false;
}

// Waits for the child; kills it (it alone, by its pid) if it has not ended in time.
int reap(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + exit_patience;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

reserved_port::reserved_port() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  if (fd_ < 0) throw real_backend_error("reserving a port: " + errno_line("socket"));
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string line = errno_line("bind");
    close(fd_);
    throw real_backend_error("reserving a port: " + line);
  }
  port_ = ntohs(a.sin_port);
}

reserved_port::~reserved_port() { close(fd_); }

// Everything is built before fork: after it, the child calls only async-signal-safe
// functions (fcntl, execve, _exit), as a multi-threaded parent requires.
spawned_rank spawn_rank_process(const std::string& name, const rank_process_launch& launch,
                                const run_secret& secret) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw real_backend_error("starting " + name + ": " + errno_line("socketpair"));
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!replaced(*e)) env.emplace_back(*e);
  }
  env.push_back("RANK=" + std::to_string(launch.rank));
  env.push_back("WORLD_SIZE=" + std::to_string(launch.world_size));
  env.push_back("LOCAL_RANK=0");
  env.push_back(std::string("MASTER_ADDR=") + loopback_address);
  if (launch.master_port != 0) env.push_back("MASTER_PORT=" + std::to_string(launch.master_port));
  env.push_back("KVSIM_RUN_KEY=" + to_hex(secret));
  env.push_back(std::string(host_plane_fd_variable) + "=" + std::to_string(launch.plane_fd));
  env.push_back(std::string(script_fd_variable) + "=" + std::to_string(pair[1]));
  const std::vector<std::string> args = own_arguments();
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int inherited[2] = {launch.plane_fd, pair[1]};

  const pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    throw real_backend_error("starting " + name + ": " + errno_line("fork"));
  }
  if (pid == 0) {
    for (const int fd : inherited) fcntl(fd, F_SETFD, 0);  // kept across exec, in the child only
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  close(pair[1]);
  return {pid, std::make_unique<remote_rank>(name, std::make_unique<step_channel>(pair[0]))};
}

void end_rank_processes(const std::vector<spawned_rank*>& ranks, std::string& failure) {
  for (spawned_rank* r : ranks) {
    if (!r->rank) continue;
    try {
      r->rank->stop(std::chrono::steady_clock::now() + exit_patience);
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  for (spawned_rank* r : ranks) {
    if (r->rank) r->rank->release();
  }
  std::string exits;
  bool failed = false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int status = ranks[i]->pid > 0 ? reap(ranks[i]->pid) : 0;
    ranks[i]->rank.reset();
    failed = failed || status != 0;
    exits += (i == 0 ? "" : ", ") + std::string("rank ") + std::to_string(i) + " exit " +
             std::to_string(status);
  }
  if (failure.empty() && failed) failure = "a rank process failed (" + exits + ")";
}

}  // namespace kvsim::real
