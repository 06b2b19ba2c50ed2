#include "tools/kvsim/search_tally.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/sim_assert.h"

namespace kvsim::tools {
namespace {

// Enough for a merge of shards to recount a search stopped at its first finding exactly
// (kvsim merge); a search with more findings than this lists the first ones only.
constexpr std::size_t finding_seeds_max = 1000;

bool is_wanted(const search_request& request, const std::string& invariant) {
  return !request.wanted_invariant || invariant == *request.wanted_invariant;
}

}  // namespace

bool trace_quota::take(const std::string& invariant) {
  if (!request_.out_dir) return false;
  bool write = written_ < request_.traces_max;
  if (is_wanted(request_, invariant) ? !wanted_seen_ : !other_seen_) write = true;
  (is_wanted(request_, invariant) ? wanted_seen_ : other_seen_) = true;
  if (write) ++written_;
  return write;
}

search_tally::search_tally(const search_request& request, std::uint64_t jobs,
                           clock::time_point start)
    : request_(request), start_(start), last_seed_(jobs, 0), finished_(jobs, false) {}

void search_tally::add(std::uint64_t job, run_note note) {
  const double received = std::chrono::duration<double>(clock::now() - start_).count();
  KVSIM_SIM_ASSERT(job < last_seed_.size() && note.seed > last_seed_[job],
                   "a job's runs come in increasing seed order");
  last_seed_[job] = note.seed;
  if (note.found && request_.stop_at_first_finding && is_wanted(request_, note.invariant)) {
    last_useful_seed_ = std::min(last_useful_seed_, note.seed);
  }
  const std::uint64_t seed = note.seed;
  pending_.emplace(seed, pending_note{std::move(note), received});
  // Every seed up to the lowest of the unfinished jobs' latest is in: no job can still send
  // a lower one.
  std::uint64_t bound = UINT64_MAX;
  for (std::size_t j = 0; j < last_seed_.size(); ++j) {
    if (!finished_[j]) bound = std::min(bound, last_seed_[j]);
  }
  settle(bound);
}

void search_tally::job_finished(std::uint64_t job) {
  finished_[job] = true;
  std::uint64_t bound = UINT64_MAX;
  for (std::size_t j = 0; j < last_seed_.size(); ++j) {
    if (!finished_[j]) bound = std::min(bound, last_seed_[j]);
  }
  settle(bound);
}

void search_tally::settle(std::uint64_t up_to_seed) {
  while (!pending_.empty() && pending_.begin()->first <= up_to_seed) {
    const pending_note p = std::move(pending_.begin()->second);
    pending_.erase(pending_.begin());
    if (settled_first()) {
      // Past the first finding of a search that stops there: a single job would never have
      // run this seed.
      drop_trace(p.note.trace_file);
      continue;
    }
    count(p.note, p.received_seconds);
  }
}

void search_tally::count(const run_note& n, double received_seconds) {
  ++result_.runs;
  for (std::size_t i = 0; i < n.probes.size(); ++i) result_.probes[i] += n.probes[i];
  if (!n.found) return;
  ++result_.findings;
  if (result_.finding_seeds.size() < finding_seeds_max) {
    result_.finding_seeds.push_back({n.seed, n.invariant});
  } else {
    result_.finding_seeds_truncated = true;
  }
  if (!n.trace_file.empty()) traces_.emplace_back(n.seed, n.trace_file);
  if (!is_wanted(request_, n.invariant)) {
    ++result_.other_findings;
    if (!result_.first_other) {
      result_.first_other = sim::finding{n.invariant, n.message, {}, {}};
      result_.first_other_seed = n.seed;
      if (!n.trace_file.empty()) result_.first_other_trace = n.trace_file;
    }
    return;
  }
  if (!result_.first) {
    result_.first = sim::finding{n.invariant, n.message, {}, {}};
    result_.first_seed = n.seed;
    result_.seconds_to_first_finding = received_seconds;
    result_.runs_to_first_finding = result_.runs;
    if (!n.trace_file.empty()) result_.first_trace = n.trace_file;
  }
}

void search_tally::drop_trace(const std::string& path) {
  if (path.empty()) return;
  std::error_code ignored;  // a trace already gone is what we want
  std::filesystem::remove(path, ignored);
}

search_result search_tally::so_far(double seconds) const {
  search_result r = result_;
  r.runs += pending_.size();
  for (const auto& [seed, p] : pending_) r.findings += p.note.found ? 1 : 0;
  r.seconds = seconds;
  return r;
}

search_result search_tally::finish(double seconds) {
  settle(UINT64_MAX);
  // The lowest seeds' traces, and the first findings' (which may lie beyond them).
  std::sort(traces_.begin(), traces_.end());
  for (std::size_t i = 0; i < traces_.size(); ++i) {
    const std::string& path = traces_[i].second;
    const bool named = result_.first_trace == path || result_.first_other_trace == path;
    if (i < request_.traces_max || named) {
      result_.trace_files.push_back(path);
    } else {
      drop_trace(path);
    }
  }
  result_.seconds = seconds;
  return result_;
}

}  // namespace kvsim::tools
