#include "real_backend/process_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>
#include <vector>

#include "real_backend/errors.h"
#include "real_backend/host_data_plane.h"
#include "real_backend/host_page_pool.h"
#include "real_backend/rank_process.h"
#include "real_backend/remote_rank.h"
#include "real_backend/run_secret.h"
#include "real_backend/script_board.h"
#include "real_backend/step_channel.h"
#include "real_backend/transfer_context.h"

extern char** environ;

namespace kvsim::real {
namespace {

constexpr auto start_patience = std::chrono::milliseconds(20'000);
constexpr auto exit_patience = std::chrono::milliseconds(10'000);

std::string errno_line(const char* call) { return std::string(call) + " failed: " + std::strerror(errno); }

// A loopback port held (bound, not listening, SO_REUSEADDR) for the run: the kernel hands it
// to no one else, and decode's listener, also SO_REUSEADDR, may still bind it (Linux).
class reserved_port {
 public:
  reserved_port() : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
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
  ~reserved_port() { close(fd_); }
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

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
  static const char* const ours[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "MASTER_ADDR=",
                                     "MASTER_PORT=", "KVSIM_RUN_KEY=", "KVSIM_HOST_PLANE_FD=",
                                     "KVSIM_SCRIPT_FD=", "KVSIM_RENDEZVOUS_PORT=", "SLURM_PROCID=",
                                     "SLURM_NTASKS=", "SLURM_LOCALID="};
  for (const char* v : ours) {
    if (entry.rfind(v, 0) == 0) return true;
  }
  return false;
}

struct child {
  pid_t pid = -1;
  std::unique_ptr<remote_rank> rank;
};

// Everything is built before fork: after it, the child calls only async-signal-safe
// functions (fcntl, execve, _exit), as a multi-threaded parent requires.
child start(const std::string& name, core::rank_id rank, std::uint16_t port, int plane_fd,
            const run_secret& secret) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw real_backend_error("starting " + name + ": " + errno_line("socketpair"));
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!replaced(*e)) env.emplace_back(*e);
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=2");
  env.push_back("LOCAL_RANK=0");
  env.push_back(std::string("MASTER_ADDR=") + loopback_address);
  env.push_back("MASTER_PORT=" + std::to_string(port));
  env.push_back("KVSIM_RUN_KEY=" + to_hex(secret));
  env.push_back(std::string(host_plane_fd_variable) + "=" + std::to_string(plane_fd));
  env.push_back(std::string(script_fd_variable) + "=" + std::to_string(pair[1]));
  const std::vector<std::string> args = own_arguments();
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int inherited[2] = {plane_fd, pair[1]};

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

std::size_t transfer_region_bytes(const scenarios::scenario_spec& spec) {
  const std::size_t pool = host_page_bytes_needed(spec.topology.pages_per_rank, spec.topology.page_bytes);
  return 2 * pool + std::size_t{host_data_plane::gates_max} * 8 +
         board_bytes(spec.topology.pages_per_rank) + (std::size_t{1} << 20);
}

real_outcome run_transfer_processes(const scenarios::scenario_spec& spec, core::variant v,
                                    const std::string& variant_name, const script_options& options) {
  host_data_plane plane(shared_region::create(transfer_region_bytes(spec)));
  const run_secret secret = draw_run_secret();
  transfer_context context(spec, v, plane, secret);  // the script's view: keys, gates, board
  const reserved_port port;

  child decode = start("the decode rank's process", decode_rank, port.port(), plane.region().fd(), secret);
  child prefill;
  std::vector<real_finding> prefill_findings;
  std::vector<real_finding> decode_findings;
  std::vector<recorded_event> prefill_events;
  std::vector<recorded_event> decode_events;
  std::string failure;
  try {
    decode.rank->expect("listening", start_patience);
    prefill = start("the prefill rank's process", prefill_rank, port.port(), plane.region().fd(), secret);
    prefill.rank->expect("ready", start_patience);
    decode.rank->expect("ready", start_patience);
    prefill.rank->serve();
    decode.rank->serve();
    run_transfer_steps(context, *prefill.rank, *decode.rank, options);
    const auto deadline = std::chrono::steady_clock::now() + options.patience;
    prefill_findings = findings_from_json(prefill.rank->findings_json(deadline));
    decode_findings = findings_from_json(decode.rank->findings_json(deadline));
    prefill_events = events_from_json(prefill.rank->events_json(deadline));
    decode_events = events_from_json(decode.rank->events_json(deadline));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (auto& g : context.gates) g->open();  // no copy worker may wait past the run
  for (child* c : {&prefill, &decode}) {
    if (!c->rank) continue;
    try {
      c->rank->stop(std::chrono::steady_clock::now() + exit_patience);
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  for (child* c : {&prefill, &decode}) {
    if (c->rank) c->rank->release();
  }
  int exit_prefill = prefill.pid > 0 ? reap(prefill.pid) : 0;
  int exit_decode = reap(decode.pid);
  prefill.rank.reset();
  decode.rank.reset();
  if (!failure.empty()) throw real_backend_error(failure);
  if (exit_prefill != 0 || exit_decode != 0) {
    throw real_backend_error("a rank process failed (prefill exit " + std::to_string(exit_prefill) +
                             ", decode exit " + std::to_string(exit_decode) + ")");
  }

  real_outcome outcome;
  outcome.scenario = spec.name;
  outcome.variant = variant_name;
  outcome.backend = plane.name();
  outcome.devices = 1;
  outcome.simulated_peers = false;
  outcome.notes.push_back("prefill rank 0 in process " + std::to_string(prefill.pid) +
                          ", decode rank 1 in process " + std::to_string(decode.pid) +
                          ": pages in shared memory (memfd) that both map, copies by prefill's "
                          "worker threads into decode's pages, gates opened across processes");
  outcome.notes.push_back("control messages over loopback TCP (127.0.0.1:" +
                          std::to_string(port.port()) +
                          ", authenticated with a run key drawn for this run); the script "
                          "hands each rank its steps over a socketpair");
  outcome.findings =
      merge_findings({context.findings.findings(), prefill_findings, decode_findings});
  outcome.events = merge_events({prefill_events, decode_events});
  return outcome;
}

}  // namespace kvsim::real
