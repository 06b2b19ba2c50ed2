#include "tools/kvsim/explore_search.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "sim/dfs.h"
#include "sim/dpor.h"
#include "scenarios/scenario_world.h"
#include "sim/replay.h"
#include "sim/trace.h"
#include "scenarios/scenario_generator.h"
#include "tools/kvsim/cli_args.h"
#include "tools/kvsim/run_one.h"

namespace kvsim::tools {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point start) {
  return std::chrono::duration<double>(steady::now() - start).count();
}

// Set by SIGUSR1 in a worker: the parent has what it needs; stop after the current run.
volatile std::sig_atomic_t stop_requested = 0;
extern "C" void on_stop_signal(int) { stop_requested = 1; }

// A trace written with the signals that would end the process held back, so it is complete
// under its final name or absent (sim::write_trace is itself atomic: temp file + rename).
void write_trace_whole(const std::filesystem::path& path, const sim::trace& t) {
  sigset_t held;
  sigset_t previous;
  sigemptyset(&held);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) sigaddset(&held, s);
  sigprocmask(SIG_BLOCK, &held, &previous);
  try {
    sim::write_trace(path, t);
  } catch (...) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
}

// What a run tells the search (in a worker: one line on the pipe).
struct run_note {
  std::uint64_t seed = 0;
  bool found = false;
  std::string invariant;
  std::string trace_file;
  std::string message;
  scenarios::probe_hits probes{};
};

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
// Returns when its seeds or the time are spent, or when `keep_going` says stop.
template <typename Note, typename KeepGoing>
void run_job(const search_request& request, std::uint64_t job, steady::time_point start,
             const Note& note, const KeepGoing& keep_going) {
  seed_plan seeds(request.shard, job, request.jobs, request.max_seed);
  std::uint64_t traces = 0;
  while (keep_going()) {
    if (request.budget_seconds && seconds_since(start) >= *request.budget_seconds) return;
    const auto seed = seeds.next();
    if (!seed) return;
    const scenarios::scenario_spec spec =
        request.generate ? scenarios::generate_scenario(*seed) : request.spec;
    const run_setup setup{spec, request.variant, request.strategy.text(), *seed,
                          faults_for(spec, *seed), request.checkers};
    const auto chooser = request.strategy.make(*seed);
    const bool want_trace = request.out_dir && traces < request.traces_max;
    run_report report = run_once(setup, *chooser, want_trace ? keep::on_finding : keep::outcome_only);
    run_note n{*seed, report.found.has_value(), "", "", "", report.probes};
    if (report.found) {
      n.invariant = report.found->invariant;
      n.message = report.found->message;
      if (want_trace) {
        const auto path = trace_path(*request.out_dir, request, *seed);
        write_trace_whole(path, report.trace);
        n.trace_file = path.string();
        ++traces;
      }
    }
    note(n);
  }
}

void count(search_result& result, const run_note& n, steady::time_point start,
           const std::optional<std::string>& wanted) {
  ++result.runs;
  for (std::size_t i = 0; i < n.probes.size(); ++i) result.probes[i] += n.probes[i];
  if (!n.found) return;
  ++result.findings;
  if (!n.trace_file.empty()) result.trace_files.push_back(n.trace_file);
  if (wanted && n.invariant != *wanted) {
    ++result.other_findings;
    if (!result.first_other) {
      result.first_other = sim::finding{n.invariant, n.message, {}, {}};
      result.first_other_seed = n.seed;
    }
    return;
  }
  if (!result.first) {
    result.first = sim::finding{n.invariant, n.message, {}, {}};
    result.first_seed = n.seed;
    result.seconds_to_first_finding = seconds_since(start);
    result.runs_to_first_finding = result.runs;
  }
}

search_result search_in_process(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  search_result result;
  auto last_progress = start;
  run_job(
      request, 0, start,
      [&](const run_note& n) {
        count(result, n, start, request.wanted_invariant);
        if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
          last_progress = steady::now();
          result.seconds = seconds_since(start);
          progress(result);
        }
      },
      [&] { return !(request.stop_at_first_finding && result.first); });
  result.seconds = seconds_since(start);
  return result;
}

[[noreturn]] void worker_main(const search_request& request, std::uint64_t job,
                              steady::time_point start, int out_fd) {
  stop_requested = 0;
  std::signal(SIGUSR1, on_stop_signal);
  // The parent forked with SIGUSR1 blocked, so a stop sent before this point waits here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
  int status = 0;
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
          batch += encode(n);
          if (n.found || batch.size() > 8192 ||
              steady::now() - last_flush > std::chrono::milliseconds(100)) {
            flush();
          }
        },
        [&] { return stop_requested == 0; });
    flush();
  } catch (const std::exception& e) {
    const std::string line = std::string("kvsim explore: worker ") + std::to_string(job) + ": " +
                             e.what() + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    status = 4;
  }
  ::close(out_fd);
  _exit(status);
}

search_result search_in_workers(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  struct worker {
    pid_t pid = -1;
    int fd = -1;
    std::string pending;
  };
  std::vector<worker> workers;
  std::cout.flush();
  std::cerr.flush();
  // Workers start with SIGUSR1 blocked until their handler is in place (worker_main).
  sigset_t stop;
  sigset_t previous;
  sigemptyset(&stop);
  sigaddset(&stop, SIGUSR1);
  sigprocmask(SIG_BLOCK, &stop, &previous);
  for (std::uint64_t job = 0; job < request.jobs; ++job) {
    int fds[2];
    if (::pipe(fds) != 0) throw input_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw input_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      for (const worker& w : workers) ::close(w.fd);
      worker_main(request, job, start, fds[1]);
    }
    ::close(fds[1]);
    workers.push_back({pid, fds[0], {}});
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  search_result result;
  bool stop_sent = false;
  auto last_progress = start;
  std::size_t open = workers.size();
  while (open > 0) {
    std::vector<pollfd> polls;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].fd < 0) continue;
      polls.push_back({workers[i].fd, POLLIN, 0});
      which.push_back(i);
    }
    const int ready = ::poll(polls.data(), polls.size(), 250);
    if (ready < 0 && errno != EINTR) throw input_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t k = 0; k < polls.size() && ready > 0; ++k) {
      if ((polls[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      worker& w = workers[which[k]];
      char buffer[4096];
      const ssize_t got = ::read(w.fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ::close(w.fd);
        w.fd = -1;
        --open;
        continue;
      }
      w.pending.append(buffer, static_cast<std::size_t>(got));
      for (auto newline = w.pending.find('\n'); newline != std::string::npos;
           newline = w.pending.find('\n')) {
        count(result, decode(w.pending.substr(0, newline)), start, request.wanted_invariant);
        w.pending.erase(0, newline + 1);
      }
    }
    if (!stop_sent && request.stop_at_first_finding && result.first) {
      for (const worker& w : workers) ::kill(w.pid, SIGUSR1);
      stop_sent = true;
    }
    if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
      last_progress = steady::now();
      result.seconds = seconds_since(start);
      progress(result);
    }
  }
  bool failed = false;
  for (const worker& w : workers) {
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
  }
  if (failed) throw input_error("a search worker failed (see the line above)");
  result.seconds = seconds_since(start);
  return result;
}

// An exhaustive search's first finding into its row: the finding's decisions replay
// strictly, and that replay is recorded as the trace; one of another invariant than the row
// wants is reported as such (the search stops at its first finding, whatever it is).
void report_first_finding(const search_request& request, const run_setup& setup,
                          std::uint64_t seed, const sim::finding& found,
                          const std::vector<sim::decision>& decisions, std::uint64_t run,
                          search_result& result) {
  result.first = found;
  result.first_seed = seed;
  result.seconds_to_first_finding = result.seconds;  // the search reports no time of its own
  result.runs_to_first_finding = run;
  if (request.out_dir) {
    sim::replay chooser(decisions, sim::replay_mode::strict);
    const run_report report = run_once(setup, chooser);
    const auto path = trace_path(*request.out_dir, request, seed);
    write_trace_whole(path, report.trace);
    result.trace_files.push_back(path.string());
  }
  if (request.wanted_invariant && result.first->invariant != *request.wanted_invariant) {
    result.first_other = std::exchange(result.first, std::nullopt);
    result.first_other_seed = std::exchange(result.first_seed, std::nullopt);
    result.other_findings = result.findings;
  }
}

search_result search_dfs(const search_request& request) {
  const auto start = steady::now();
  constexpr std::uint64_t dfs_seed = 1;  // the world's fault profile; dfs decides the rest
  const sim::fault_profile faults = faults_for(request.spec, dfs_seed);
  sim::dfs_options options;
  options.preemption_bound = request.strategy.preemption_bound;
  options.sleep_sets = true;
  if (request.max_seed) options.max_runs = *request.max_seed;
  options.stop_at_first_finding = request.stop_at_first_finding;
  const run_setup setup{request.spec, request.variant, request.strategy.text(), dfs_seed, faults,
                        request.checkers};
  scenarios::probe_hits probes{};
  const sim::dfs_result dfs = sim::dfs_search(
      [&](sim::strategy& chooser, const std::function<void(const sim::world&)>& inspect) {
        run_inspecting(setup, chooser, [&](const sim::world& w, const sim::run_outcome&) {
          const scenarios::probe_hits hits = scenarios::count_probes(w.events());
          for (std::size_t i = 0; i < hits.size(); ++i) probes[i] += hits[i];
          inspect(w);
        });
      },
      options);
  if (dfs.nondeterminism) {
    throw input_error("dfs: the world did not repeat a replayed prefix (decision " +
                      std::to_string(dfs.nondeterminism->decision_index) + ": expected " +
                      dfs.nondeterminism->expected + ", got " + dfs.nondeterminism->actual +
                      "): the scenario is not deterministic");
  }
  search_result result;
  result.runs = dfs.runs;
  result.findings = dfs.findings;
  result.exhausted = dfs.exhausted;
  result.pruned = dfs.pruned;
  result.probes = probes;
  result.seconds = seconds_since(start);
  if (dfs.first_finding) {
    report_first_finding(request, setup, dfs_seed, *dfs.first_finding, dfs.first_finding_decisions,
                         dfs.first_finding_run, result);
  }
  return result;
}

search_result search_dpor(const search_request& request, const progress_fn& progress) {
  const auto start = steady::now();
  constexpr std::uint64_t dpor_seed = 1;  // names the trace; dpor decides everything
  const sim::fault_profile faults = scenarios::faults_as_choices(request.spec);
  sim::dpor_options options;
  options.preemption_bound = request.strategy.preemption_bound;
  options.max_faults = request.max_faults;
  if (request.max_seed) options.max_runs = *request.max_seed;
  options.stop_at_first_finding = request.stop_at_first_finding;
  const run_setup setup{request.spec, request.variant, request.strategy.text(), dpor_seed, faults,
                        request.checkers};
  scenarios::probe_hits probes{};
  std::uint64_t runs = 0;
  auto last_progress = steady::now();
  const sim::dpor_run_fn run_fn = [&](sim::strategy& chooser,
                                      const std::function<void(const sim::world&)>& inspect) {
    run_inspecting(setup, chooser, [&](const sim::world& w, const sim::run_outcome&) {
      const scenarios::probe_hits hits = scenarios::count_probes(w.events());
      for (std::size_t i = 0; i < hits.size(); ++i) probes[i] += hits[i];
      inspect(w);
    });
    ++runs;
    if (steady::now() - last_progress > std::chrono::milliseconds(250)) {
      last_progress = steady::now();
      search_result so_far;
      so_far.runs = runs;
      so_far.seconds = seconds_since(start);
      progress(so_far);
    }
  };
  const auto out_of_time = [&] {
    return request.budget_seconds && seconds_since(start) >= *request.budget_seconds;
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
    if (request.max_seed) staged.max_runs = *request.max_seed - std::min(*request.max_seed, runs);
    dpor = sim::dpor_search(run_fn, staged, out_of_time);
    if (dpor.nondeterminism || dpor.first_finding || !dpor.exhausted || staged.max_runs == 0) {
      if (dpor.first_finding) found_within = staged.deviation_bound;
      break;
    }
    if (stage < deviation_stages) runs_before += dpor.runs;
  }
  dpor.first_finding_run += runs_before;
  dpor.runs = runs;
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
  result.probes = probes;
  result.seconds = seconds_since(start);
  if (dpor.first_finding) {
    report_first_finding(request, setup, dpor_seed, *dpor.first_finding,
                         dpor.first_finding_decisions, dpor.first_finding_run, result);
  }
  return result;
}

}  // namespace

std::filesystem::path trace_path(const std::filesystem::path& dir, const search_request& request,
                                 std::uint64_t seed) {
  std::string strategy = request.strategy.text();
  std::replace(strategy.begin(), strategy.end(), ':', '-');
  return dir / (request.spec.name + "." + request.variant_label + "." + strategy + ".seed" +
                std::to_string(seed) + ".json");
}

search_result run_search(const search_request& request, const progress_fn& progress) {
  if (request.strategy.family == strategy_family::dfs) return search_dfs(request);
  if (request.strategy.family == strategy_family::dpor) return search_dpor(request, progress);
  if (request.jobs <= 1) return search_in_process(request, progress);
  return search_in_workers(request, progress);
}

}  // namespace kvsim::tools
