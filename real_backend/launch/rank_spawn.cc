#include "real_backend/launch/rank_spawn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <thread>

#include "real_backend/errors.h"
#include "real_backend/launch/launcher.h"
#include "real_backend/host/shared_region.h"
#include "real_backend/launch/step_channel.h"
#include "real_backend/wire/wait_text.h"

extern char** environ;

namespace kvsim::real {
namespace {

constexpr auto exit_patience = std::chrono::milliseconds(10'000);
// After a failed run: a rank still caught in a wait of its own (connecting to, or accepting,
// a peer that died) does not read its step link, and is not waited for longer than this.
constexpr auto failed_run_exit_patience = std::chrono::milliseconds(1'000);
// How often a wait for a rank's word looks at every process of the run.
constexpr auto liveness_poll = std::chrono::milliseconds(50);

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

// Waits for the child; kills it (it alone, by its pid) if it has not ended in time. Its exit
// status, or -1 when a signal ended it.
int reap(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
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

// "RANK_KEY=<hex>" built in one buffer, so that no other copy of the hex is left to wipe.
std::string run_key_entry(const run_secret& secret) {
  std::string hex = to_hex(secret);
  std::string entry;
  entry.reserve(std::string_view(run_key_variable).size() + 1 + hex.size());
  entry.append(run_key_variable).append("=").append(hex);
  wipe(hex);
  return entry;
}

// The rank named by how it ended ("the decode rank's process (pid 7) was killed by signal 9
// (Killed)"), waiting up to `within` for the end to show: a process's sockets close a moment
// before it can be waited for.
std::optional<std::string> ended(const spawned_rank& rank, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    if (const auto end = process_end(rank.pid)) {
      return rank.name + " (pid " + std::to_string(rank.pid) + ") " + *end;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
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
  const std::size_t key_entry = env.size();  // wiped below, once the child has its copy
  env.push_back(run_key_entry(secret));
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
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid == 0) {
    // Killed with the thread that started it (PR_SET_PDEATHSIG; kept across exec): a parent
    // killed outright (SIGKILL) leaves no rank holding its ports or waiting for a peer. The
    // parent may have died before the signal was asked for: then nobody would send it.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    for (const int fd : inherited) fcntl(fd, F_SETFD, 0);  // kept across exec, in the child only
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  wipe(env[key_entry]);
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    throw real_backend_error("starting " + name + ": " + errno_line("fork"));
  }
  close(pair[1]);
  spawned_rank started{
      pid, name, std::make_unique<remote_rank>(name, std::make_unique<step_channel>(pair[0]))};
  started.rank->describe_end_with([pid, name] {
    return ended({pid, name, nullptr}, std::chrono::milliseconds(1000));
  });
  return started;
}

std::optional<std::string> process_end(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return "can no longer be waited for (" + std::string(std::strerror(errno)) + ")";
  }
  if (info.si_pid == 0) return std::nullopt;  // still running
  if (info.si_code == CLD_EXITED) return "exited with status " + std::to_string(info.si_status);
  const char* what = strsignal(info.si_status);
  return "was killed by signal " + std::to_string(info.si_status) + " (" +
         (what != nullptr ? what : "unknown") + ")";
}

void throw_if_any_ended(const std::vector<spawned_rank*>& run) {
  for (const spawned_rank* r : run) {
    if (r->pid <= 0) continue;
    if (const auto line = ended(*r, std::chrono::milliseconds(0))) {
      throw peer_gone(*line + " while the run was starting");
    }
  }
}

void await_word(const std::vector<spawned_rank*>& run, spawned_rank& rank, const std::string& word,
                std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    try {
      if (rank.rank->heard(word, liveness_poll)) return;
    } catch (const peer_gone& e) {
      // Its link closed: say how the process ended, which its last line could not.
      if (const auto line = ended(rank, std::chrono::milliseconds(1000))) {
        throw peer_gone(*line + " before it said '" + word + "'");
      }
      throw;
    }
    throw_if_any_ended(run);
    if (std::chrono::steady_clock::now() >= deadline) {
      throw real_backend_error("timed out: waited " + seconds_text(patience) + " for " + rank.name +
                               " (pid " + std::to_string(rank.pid) + ") to say '" + word + "'");
    }
  }
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
  const auto patience = failure.empty() ? exit_patience : failed_run_exit_patience;
  std::string exits;
  bool failed = false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int status = ranks[i]->pid > 0 ? reap(ranks[i]->pid, patience) : 0;
    ranks[i]->rank.reset();
    failed = failed || status != 0;
    exits += (i == 0 ? "" : ", ") + std::string("rank ") + std::to_string(i) + " exit " +
             std::to_string(status);
  }
  if (failure.empty() && failed) failure = "a rank process failed (" + exits + ")";
}

}  // namespace kvsim::real
