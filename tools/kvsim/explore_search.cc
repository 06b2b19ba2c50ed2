#include "tools/kvsim/explore_search.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <sstream>

#include "sim/search/dpor.h"
#include "scenarios/scenario_world.h"
#include "sim/search/replay.h"
#include "sim/trace.h"
#include "spec/scenario_generator.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/interrupt.h"
#include "tools/kvsim/run_one.h"
#include "tools/kvsim/search_tally.h"

namespace kvsim::tools {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

// A trace written with the signals that would end the process held back, so it is complete
// under its final name or absent (sim::write_trace is itself atomic: temp file + rename). It
// goes into --out DIR under a name kvsim chose: a link found there is refused, never followed.
void write_trace_whole(const std::filesystem::path& path, const sim::trace& t) {
  sigset_t held;
  sigset_t previous;
  sigemptyset(&held);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) sigaddset(&held, s);
  sigprocmask(SIG_BLOCK, &held, &previous);
  try {
    sim::write_trace(path, t, sim::link_policy::refuse);
  } catch (const sim::trace_error& e) {
    // A full disk or a vanished directory: the command's one error line (exit 2).
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw input_error(e.what());
  } catch (...) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
}

// Probe hits as "index=count" pairs, only those hit: "0=3,9=1".
std::string encode_probes(const scenarios::probe_hits& hits) {
  std::string text;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    if (hits[i] == 0) continue;
    if (!text.empty()) text += ',';
    text += std::to_string(i) + "=" + std::to_string(hits[i]);
  }
  return text;
}

scenarios::probe_hits decode_probes(const std::string& text) {
  scenarios::probe_hits hits{};
  std::istringstream in(text);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const auto equals = pair.find('=');
    if (equals == std::string::npos) continue;
    const auto index = std::strtoull(pair.substr(0, equals).c_str(), nullptr, 10);
    if (index < hits.size()) hits[index] = std::strtoull(pair.substr(equals + 1).c_str(), nullptr, 10);
  }
  return hits;
}

std::string encode(const run_note& n) {
  std::string message = n.message;
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\t', ' ');
  return std::to_string(n.seed) + "\t" + (n.found ? "1" : "0") + "\t" + n.invariant + "\t" +
         n.trace_file + "\t" + message + "\t" + encode_probes(n.probes) + "\n";
}

run_note decode(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) fields.push_back(field);
  while (fields.size() < 6) fields.emplace_back();
  run_note n;
  n.seed = std::strtoull(fields[0].c_str(), nullptr, 10);
  n.found = fields[1] == "1";
  n.invariant = fields[2];
  n.trace_file = fields[3];
  n.message = fields[4];
  n.probes = decode_probes(fields[5]);
  return n;
}

// One job's loop over its seeds: runs, writes finding traces, reports each run to `note`.
// Returns when its seeds or the time are spent, when the next seed is past
// `last_useful_seed()` (the search stops at a lower seed's finding), or on an interrupt.
template <typename Note, typename LastUsefulSeed>
void run_job(const search_request& request, std::uint64_t job, steady::time_point start,
             const Note& note, const LastUsefulSeed& last_useful_seed) {
  seed_plan seeds(request.shard, job, request.jobs, request.max_seed);
  trace_quota quota(request);
  // One setup for the job, its seed and faults set per run: the scenario is copied once per
  // job, not per run, unless each seed generates its own.
  sim::fiber_stacks stacks;  // one pool for every run of the job
  run_setup setup{request.spec, request.variant, request.strategy.text(), 0, {}, request.checkers,
                  &stacks};
  while (interrupt_signal() == 0) {
    if (request.budget_seconds && seconds_since(start) >= *request.budget_seconds) return;
    const auto seed = seeds.next();
    if (!seed || *seed > last_useful_seed()) return;
    if (request.generate) setup.spec = scenarios::generate_scenario(*seed);
    setup.seed = *seed;
    setup.faults = faults_for(setup.spec, *seed);
    const auto chooser = request.strategy.make(*seed);
    run_report report = run_once(setup, *chooser, request.out_dir ? keep::on_finding : keep::verdict_only);
    run_note n{*seed, report.found.has_value(), "", "", "", report.probes};
    if (report.found) {
      n.invariant = report.found->invariant;
      n.message = report.found->message;
      if (quota.take(n.invariant)) {
        const auto path = trace_path(*request.out_dir, request, *seed);
        write_trace_whole(path, report.trace);
        n.trace_file = path.string();
      }
    }
    note(n);
  }
}

search_result search_in_process(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  search_tally tally(request, 1, start);
  auto last_progress = start;
  run_job(
      request, 0, start,
      [&](const run_note& n) {
        tally.add(0, n);
        if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
          last_progress = steady::now();
          progress(tally.so_far(seconds_since(start)));
        }
      },
      [&] { return tally.last_useful_seed(); });
  tally.job_finished(0);
  search_result result = tally.finish(seconds_since(start));
  result.interrupted = interrupt_signal() != 0;
  return result;
}

// What the workers of one search share (an anonymous shared mapping made before the fork):
// the highest seed still worth running. A worker lowers it when it finds what a search that
// stops at its first finding waits for; the parent sets it to 0 to stop them all.
struct shared_cutoff {
  std::atomic<std::uint64_t> last_useful_seed{UINT64_MAX};

  void lower_to(std::uint64_t seed) {
    std::uint64_t current = last_useful_seed.load();
    while (seed < current && !last_useful_seed.compare_exchange_weak(current, seed)) {
    }
  }
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the cutoff is shared between processes: it must not hide a lock");

// Waits for a worker that has closed its pipe; its wait status.
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 0;  // already reaped: nothing to tell
  }
  return status;
}

// How a worker ended, when it did not end well: "was killed by signal 9 (Killed)", "exited
// with status 3". A worker that ends well exits 0 (its own errors come as an error line).
std::optional<std::string> death_of(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = ::strsignal(signal);
    return "was killed by signal " + std::to_string(signal) + " (" +
           (name != nullptr ? name : "unknown") + ")";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return std::nullopt;
}

// A line a worker sends instead of a run when it fails: the parent reports it as the one
// error line of the command.
constexpr const char* worker_error_tag = "error\t";

[[noreturn]] void worker_main(const search_request& request, std::uint64_t job,
                              steady::time_point start, int out_fd, shared_cutoff& cutoff) {
  // A worker whose parent is gone gets EPIPE from write (and ends), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  // Notes go to the parent in batches (a finding at once), so the parent sleeps in poll()
  // instead of waking for every run and taking CPU from the workers.
  std::string batch;
  auto last_flush = steady::now();
  const auto flush = [&] {
    std::size_t done = 0;
    while (done < batch.size()) {
      const ssize_t wrote = ::write(out_fd, batch.data() + done, batch.size() - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) _exit(3);  // the parent is gone
      done += static_cast<std::size_t>(wrote);
    }
    batch.clear();
    last_flush = steady::now();
  };
  try {
    run_job(
        request, job, start,
        [&](const run_note& n) {
          if (n.found && request.stop_at_first_finding &&
              (!request.wanted_invariant || n.invariant == *request.wanted_invariant)) {
            cutoff.lower_to(n.seed);
          }
          batch += encode(n);
          if (n.found || batch.size() > 8192 ||
              steady::now() - last_flush > std::chrono::milliseconds(100)) {
            flush();
          }
        },
        [&] { return cutoff.last_useful_seed.load(); });
  } catch (const std::bad_alloc&) {
    batch += std::string(worker_error_tag) + "out of memory\n";
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    batch += std::string(worker_error_tag) + message + "\n";
  }
  flush();
  ::close(out_fd);
  _exit(0);
}

// The worker processes of one search, each sending its runs' notes down a pipe, and what the
// parent has learnt of them: a worker's own error line, or how one died.
struct worker_pool {
  struct worker {
    pid_t pid = -1;
    int fd = -1;
    std::string pending;  // a note's first part, until its newline comes
  };
  std::vector<worker> workers;
  std::vector<pid_t> pid_of;  // by job, for the line naming a worker that died
  std::size_t open = 0;
  std::optional<std::string> error;
  std::optional<std::string> died;
};

void start_workers(worker_pool& pool, const search_request& request, steady::time_point start,
                   shared_cutoff& cutoff) {
  std::cout.flush();
  std::cerr.flush();
  for (std::uint64_t job = 0; job < request.jobs; ++job) {
    int fds[2];
    if (::pipe(fds) != 0) throw input_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw input_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      for (const worker_pool::worker& w : pool.workers) ::close(w.fd);
      worker_main(request, job, start, fds[1], cutoff);
    }
    ::close(fds[1]);
    pool.workers.push_back({pid, fds[0], {}});
    pool.pid_of.push_back(pid);
  }
  pool.open = pool.workers.size();
}

// Reads what worker `job` sent: its notes go to the tally; an empty read means its pipe closed,
// and the worker is reaped at once, so that one that died stops the others now instead of
// after their whole share of the seeds.
void read_worker(worker_pool& pool, std::size_t job, search_tally& tally, const search_request& request) {
  worker_pool::worker& w = pool.workers[job];
  char buffer[4096];
  const ssize_t got = ::read(w.fd, buffer, sizeof buffer);
  if (got < 0 && errno == EINTR) return;
  if (got <= 0) {
    ::close(w.fd);
    w.fd = -1;
    --pool.open;
    tally.job_finished(job);
    const int status = reap(w.pid);
    w.pid = -1;
    if (const auto death = death_of(status); death && !pool.died && interrupt_signal() == 0) {
      pool.died = "search worker " + std::to_string(job) + " of " + request.spec.name + " [" +
                  request.variant_label + "] (pid " + std::to_string(pool.pid_of[job]) + ") " + *death;
    }
    return;
  }
  w.pending.append(buffer, static_cast<std::size_t>(got));
  for (auto newline = w.pending.find('\n'); newline != std::string::npos; newline = w.pending.find('\n')) {
    const std::string line = w.pending.substr(0, newline);
    w.pending.erase(0, newline + 1);
    if (line.starts_with(worker_error_tag)) {
      if (!pool.error) pool.error = line.substr(std::strlen(worker_error_tag));
      continue;
    }
    tally.add(job, decode(line));
  }
}

search_result search_in_workers(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  void* mapping = ::mmap(nullptr, sizeof(shared_cutoff), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) throw input_error(std::string("mmap: ") + std::strerror(errno));
  auto* cutoff = new (mapping) shared_cutoff;
  struct unmap {
    void* mapping;
    ~unmap() { ::munmap(mapping, sizeof(shared_cutoff)); }
  } unmap_at_exit{mapping};
  worker_pool pool;
  start_workers(pool, request, start, *cutoff);
  search_tally tally(request, request.jobs, start);
  auto last_progress = start;
  while (pool.open > 0) {
    // An interrupt reaches the workers too when it came from the terminal; when it was sent
    // to this process alone, the cutoff tells them.
    if (interrupt_signal() != 0 || pool.error || pool.died) cutoff->last_useful_seed.store(0);
    std::vector<pollfd> polls;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < pool.workers.size(); ++i) {
      if (pool.workers[i].fd < 0) continue;
      polls.push_back({pool.workers[i].fd, POLLIN, 0});
      which.push_back(i);
    }
    const int ready = ::poll(polls.data(), polls.size(), 250);
    if (ready < 0 && errno != EINTR) throw input_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t k = 0; k < polls.size() && ready > 0; ++k) {
      if ((polls[k].revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_worker(pool, which[k], tally, request);
    }
    if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
      last_progress = steady::now();
      progress(tally.so_far(seconds_since(start)));
    }
  }
  // One line, whatever --jobs: the first worker's own error (a full disk, say) is bad input.
  if (pool.error) throw input_error(*pool.error);
  // A worker that died is no input error: what the others ran is reported, marked as cut
  // short, and the command says which worker died and how (exit 4).
  search_result result = tally.finish(seconds_since(start));
  result.interrupted = interrupt_signal() != 0 || pool.died.has_value();
  result.worker_died = pool.died;
  return result;
}

// The runs of a dpor search as its row sees them: code probes summed, and the traces
// of findings written as they happen, named by run index (all runs share one seed).
class exhaustive_runs {
 public:
  exhaustive_runs(const search_request& request, const run_setup& setup)
      : request_(request), setup_(setup), quota_(request) {}

  void observe(const sim::world& w) {
    ++runs_;
    const scenarios::probe_hits hits = scenarios::count_probes(w.events());
    for (std::size_t i = 0; i < hits.size(); ++i) probes_[i] += hits[i];
    const auto found = w.found();
    if (!found || !quota_.take(found->invariant)) return;
    const auto path = trace_path(*request_.out_dir, request_, runs_);
    write_trace_whole(path, trace_of(setup_, w));
    traces_.emplace(runs_, path.string());
  }
  std::uint64_t runs() const { return runs_; }

  // The row's result beyond the search's own counts: probes, traces, and the first finding
  // (run `first_run`); one of another invariant than the row wants is reported as such (the
  // search stops at its first finding, whatever it is).
  void report(const std::optional<sim::finding>& first, std::uint64_t first_run,
              search_result& result) const {
    result.probes = probes_;
    for (const auto& [run, path] : traces_) result.trace_files.push_back(path);
    result.interrupted = interrupt_signal() != 0;
    if (!first) return;
    result.first = first;
    result.first_seed = setup_.seed;
    result.seconds_to_first_finding = result.seconds;  // the search reports no time of its own
    result.runs_to_first_finding = first_run;
    if (const auto it = traces_.find(first_run); it != traces_.end()) result.first_trace = it->second;
    if (request_.wanted_invariant && result.first->invariant != *request_.wanted_invariant) {
      result.first_other = std::exchange(result.first, std::nullopt);
      result.first_other_seed = std::exchange(result.first_seed, std::nullopt);
      result.first_other_trace = std::exchange(result.first_trace, std::nullopt);
      result.other_findings = result.findings;
    }
  }

 private:
  const search_request& request_;
  const run_setup& setup_;
  trace_quota quota_;
  std::uint64_t runs_ = 0;
  scenarios::probe_hits probes_{};
  std::map<std::uint64_t, std::string> traces_;  // by run index
};

search_result search_dpor(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  constexpr std::uint64_t dpor_seed = 1;  // names the trace; dpor decides everything
  const sim::fault_profile faults = scenarios::faults_as_choices(request.spec);
  sim::dpor_options options;
  options.preemption_bound = request.strategy.preemption_bound;
  options.max_faults = request.max_faults;
  if (request.max_seed) options.max_runs = *request.max_seed;
  options.stop_at_first_finding = request.stop_at_first_finding;
  sim::fiber_stacks stacks;  // one pool for every run of the search
  const run_setup setup{request.spec, request.variant, request.strategy.text(), dpor_seed, faults,
                        request.checkers, &stacks};
  exhaustive_runs observed(request, setup);
  auto last_progress = steady::now();
  const sim::dpor_run_fn run_fn = [&](sim::strategy& chooser,
                                      const std::function<void(const sim::world&)>& inspect) {
    run_inspecting(setup, chooser, [&](const sim::world& w, const sim::run_outcome&) {
      observed.observe(w);
      inspect(w);
    });
    if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
      last_progress = steady::now();
      search_result so_far;
      so_far.runs = observed.runs();
      so_far.seconds = seconds_since(start);
      progress(so_far);
    }
  };
  const auto out_of_time = [&] {
    return interrupt_signal() != 0 ||
           (request.budget_seconds && seconds_since(start) >= *request.budget_seconds);
  };
  // A search that stops at its first finding raises a deviation bound first (delay
  // bounding: runs that differ from the default run in at most d decisions), d = 0, 1, ...,
  // while each bounded search is exhausted without a finding; then the full search. The
  // bug that needs the fewest deviations comes first, instead of behind every variation of
  // the run's last decisions (depth-first order). A clean row runs the full search only.
  std::optional<std::uint32_t> found_within;
  std::uint64_t runs_before = 0;
  sim::dpor_result dpor;
  const std::uint32_t deviation_stages = request.stop_at_first_finding ? 8 : 0;
  for (std::uint32_t stage = 0; stage <= deviation_stages; ++stage) {
    sim::dpor_options staged = options;
    if (stage < deviation_stages) staged.deviation_bound = stage;
    if (request.max_seed) {
      staged.max_runs = *request.max_seed - std::min(*request.max_seed, observed.runs());
    }
    dpor = sim::dpor_search(run_fn, staged, out_of_time);
    if (dpor.nondeterminism || dpor.first_finding || !dpor.exhausted || staged.max_runs == 0) {
      if (dpor.first_finding) found_within = staged.deviation_bound;
      break;
    }
    if (stage < deviation_stages) runs_before += dpor.runs;
  }
  dpor.first_finding_run += runs_before;
  dpor.runs = observed.runs();
  if (dpor.nondeterminism) {
    throw input_error("dpor: the world did not repeat a replayed prefix (decision " +
                      std::to_string(dpor.nondeterminism->decision_index) + ": expected " +
                      dpor.nondeterminism->expected + ", got " + dpor.nondeterminism->actual +
                      "): the scenario is not deterministic");
  }
  search_result result;
  result.runs = dpor.runs;
  result.findings = dpor.findings;
  result.exhausted = dpor.exhausted;
  result.pruned = dpor.pruned;
  result.sleep_blocked = dpor.sleep_blocked;
  result.distinct_states = dpor.distinct_states;
  result.distinct_outcomes = dpor.terminal_digests.size();
  result.max_faults = request.max_faults;
  result.deviation_bound = found_within;
  result.seconds = seconds_since(start);
  observed.report(dpor.first_finding, dpor.first_finding_run, result);
  return result;
}

}  // namespace

std::filesystem::path trace_path(const std::filesystem::path& dir, const search_request& request,
                                 std::uint64_t seed_or_run) {
  std::string strategy = request.strategy.text();
  std::replace(strategy.begin(), strategy.end(), ':', '-');
  return dir / (request.spec.name + "." + request.variant_label + "." + strategy +
                (request.strategy.exhaustive() ? ".run" : ".seed") + std::to_string(seed_or_run) +
                ".json");
}

search_result run_search(const search_request& request, const progress_fn& progress) {
  if (request.strategy.family == strategy_family::dpor) return search_dpor(request, progress);
  if (request.jobs <= 1) return search_in_process(request, progress);
  return search_in_workers(request, progress);
}

}  // namespace kvsim::tools
