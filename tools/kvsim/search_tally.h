#pragma once
// The books of a random or pct search: its runs come in from one job or several (forked
// workers), each job's in increasing seed order, and are counted in seed order, so what the
// search reports does not depend on --jobs or on which worker was quicker. The first finding
// is the one of the lowest seed; a search that stops at its first finding counts exactly the
// seeds up to it (a single job would have run those and no more); the traces kept are those
// of the lowest seeds (and of the first finding of each kind), whichever job wrote them.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/kvsim/explore_search.h"

namespace kvsim::tools {

// What one run tells the search.
struct run_note {
  std::uint64_t seed = 0;
  bool found = false;
  std::string invariant;
  std::string trace_file;  // empty: no trace written
  std::string message;
  scenarios::probe_hits probes{};
};

// Which findings a job writes traces for: its first `traces_max`, and the first of the
// invariant the search wants and the first of any other, so that whatever the other jobs
// found, the traces the tally keeps (finish) were written.
class trace_quota {
 public:
  explicit trace_quota(const search_request& request) : request_(request) {}
  // Called for each finding of the job, in seed order: whether to write its trace.
  bool take(const std::string& invariant);

 private:
  const search_request& request_;
  std::uint64_t written_ = 0;
  bool wanted_seen_ = false;
  bool other_seen_ = false;
};

class search_tally {
 public:
  using clock = std::chrono::steady_clock;
  search_tally(const search_request& request, std::uint64_t jobs, clock::time_point start);

  // A run of `job`; the job's runs must come in increasing seed order.
  void add(std::uint64_t job, run_note note);
  // The job will send nothing more: it no longer holds back the counting of later seeds.
  void job_finished(std::uint64_t job);

  // The highest seed still worth running: with stop_at_first_finding, the lowest seed of a
  // wanted finding received so far (seeds above it would not be counted); else no limit.
  std::uint64_t last_useful_seed() const { return last_useful_seed_; }
  // The search stops at its first finding and that finding is counted: nothing can change it.
  bool settled_first() const { return request_.stop_at_first_finding && result_.first.has_value(); }

  // For progress lines: the runs counted so far plus those received but not yet counted.
  search_result so_far(double seconds) const;
  // Counts every run received, keeps the traces the report names and removes the others.
  search_result finish(double seconds);

 private:
  void settle(std::uint64_t up_to_seed);
  void count(const run_note& note, double received_seconds);
  void drop_trace(const std::string& path);

  const search_request& request_;
  clock::time_point start_;
  std::vector<std::uint64_t> last_seed_;  // per job; 0: none yet
  std::vector<bool> finished_;
  struct pending_note {
    run_note note;
    double received_seconds = 0;
  };
  std::map<std::uint64_t, pending_note> pending_;  // received, not yet counted, by seed
  std::vector<std::pair<std::uint64_t, std::string>> traces_;  // counted findings' traces
  std::uint64_t last_useful_seed_ = UINT64_MAX;
  search_result result_;
};

}  // namespace kvsim::tools
