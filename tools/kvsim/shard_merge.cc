#include "tools/kvsim/shard_merge.h"

#include <algorithm>
#include <map>
#include <regex>

#include "spec/one_line.h"
#include "sim/sim_assert.h"
#include "tools/kvsim/cli_args.h"

namespace kvsim::tools {
namespace {

// The finding seeds explore lists (search_tally.cc): a merge lists as many.
constexpr std::size_t finding_seeds_max = 1000;

std::string shard_text(shard_spec shard) {
  return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

// Rows match across shards by what makes them one search.
std::string row_key(const explore_row& row) {
  const search_request& q = row.request;
  return q.spec.name + " [" + q.variant_label + ", " + q.strategy.text() + ", " +
         properties::to_string(q.checkers) + "]";
}

struct shard_part {
  shard_spec shard;
  const explore_row* row = nullptr;
};

// The parts of one row must be one search: the same expectation, and the same idea of
// whether it stops at its first finding.
void check_same_search(const std::vector<shard_part>& parts,
                       const std::vector<std::string>& files) {
  const explore_row& first = *parts.front().row;
  std::optional<bool> stops;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const explore_row& row = *parts[i].row;
    const std::string where = files[i] + " and " + files.front() + " disagree on " + spec::echoed(row_key(row));
    if (row.expected != first.expected ||
        row.request.wanted_invariant != first.request.wanted_invariant) {
      throw input_error(where + ": what it expects");
    }
    if (row.request.spec.expect_probes != first.request.spec.expect_probes) {
      throw input_error(where + ": its expect_probes");
    }
    if (row.result.first) {
      if (stops && *stops != row.stopped_at_first_finding()) {
        throw input_error(where + ": whether it stops at its first finding");
      }
      stops = row.stopped_at_first_finding();
    }
  }
}

// The runs of a shard up to `seed`: its seeds up to it, or all it ran when it stopped short of
// them (a budget or an interrupt).
std::uint64_t runs_up_to(const shard_part& p, std::uint64_t seed) {
  return std::min(p.row->result.runs, shard_seeds_up_to(p.shard, seed));
}

// One row merged from its shards' parts, built in the order search_tally::finish builds a row.
struct row_merge {
  const std::vector<shard_part>& parts;
  explore_row merged;
  // A search that stops at its first finding stops, unsharded, at the lowest of the shards'.
  std::optional<std::uint64_t> stop_seed;
  std::vector<search_result::finding_seed> seeds;
  std::vector<std::pair<std::uint64_t, std::string>> traces;
  bool seeds_incomplete = false;  // a shard listed too few of its findings to recount them

  bool counted(std::uint64_t seed) const { return !stop_seed || seed <= *stop_seed; }

  // The request the unsharded search would have had, and where it stops.
  void merge_requests() {
    merged.ran = true;
    merged.expected = parts.front().row->expected;
    merged.request = parts.front().row->request;
    merged.request.shard = shard_spec{};
    merged.request.stop_at_first_finding = false;
    merged.request.budget_seconds.reset();
    bool budgets = true;
    double budget = 0;
    for (const shard_part& p : parts) {
      const search_request& q = p.row->request;
      if (merged.request.catalogue.empty()) merged.request.catalogue = q.catalogue;
      if (p.row->stopped_at_first_finding()) {
        merged.request.stop_at_first_finding = true;
        stop_seed = std::min(stop_seed.value_or(UINT64_MAX), *p.row->result.first_seed);
      }
      budgets = budgets && q.budget_seconds.has_value();
      budget += q.budget_seconds.value_or(0);
    }
    if (budgets) merged.request.budget_seconds = budget;
  }

  // One shard's counts, seeds, traces and first findings.
  void add(const shard_part& p) {
    search_result& r = merged.result;
    const search_result& s = p.row->result;
    r.seconds += s.seconds;
    r.interrupted = r.interrupted || s.interrupted;
    if (stop_seed) {
      r.runs += runs_up_to(p, *stop_seed);
      const bool listed_past_stop = !s.finding_seeds.empty() && s.finding_seeds.back().seed >= *stop_seed;
      seeds_incomplete = seeds_incomplete || (s.finding_seeds_truncated && !listed_past_stop);
    } else {
      r.runs += s.runs;
      r.findings += s.findings;
      r.other_findings += s.other_findings;
      for (std::size_t i = 0; i < r.probes.size(); ++i) r.probes[i] += s.probes[i];
    }
    for (const auto& f : s.finding_seeds) {
      if (f.seed == 0 || (f.seed - 1) % p.shard.count != p.shard.index) {
        throw input_error(spec::echoed(row_key(merged)) + ": seed " + std::to_string(f.seed) +
                          " is not one of shard " + shard_text(p.shard) + "'s");
      }
      if (counted(f.seed)) seeds.push_back(f);
    }
    for (const std::string& file : s.trace_files) {
      if (const std::uint64_t seed = trace_seed(file); counted(seed)) traces.emplace_back(seed, file);
    }
    if (s.first && (!r.first || *s.first_seed < *r.first_seed)) {
      r.first = s.first;
      r.first_seed = s.first_seed;
      r.first_trace = s.first_trace;
      r.seconds_to_first_finding = s.seconds_to_first_finding;
    }
    if (s.first_other && counted(*s.first_other_seed) &&
        (!r.first_other || *s.first_other_seed < *r.first_other_seed)) {
      r.first_other = s.first_other;
      r.first_other_seed = s.first_other_seed;
      r.first_other_trace = s.first_other_trace;
    }
  }

  // The finding seeds in order, each once; with a stop, the findings are those up to it.
  void count_seeds() {
    search_result& r = merged.result;
    std::sort(seeds.begin(), seeds.end(), [](const auto& a, const auto& b) { return a.seed < b.seed; });
    for (std::size_t i = 1; i < seeds.size(); ++i) {
      if (seeds[i].seed == seeds[i - 1].seed) {
        throw input_error(spec::echoed(row_key(merged)) + ": seed " + std::to_string(seeds[i].seed) +
                          " is listed twice");
      }
    }
    if (stop_seed) {
      r.findings = seeds.size();
      r.other_findings =
          static_cast<std::uint64_t>(std::count_if(seeds.begin(), seeds.end(), [&](const auto& f) {
            return merged.request.wanted_invariant && f.invariant != *merged.request.wanted_invariant;
          }));
    }
    r.finding_seeds_truncated = r.findings > finding_seeds_max || seeds_incomplete;
    if (seeds.size() > finding_seeds_max) seeds.resize(finding_seeds_max);
    r.finding_seeds = std::move(seeds);
    if (r.first) {
      r.runs_to_first_finding = 0;
      for (const shard_part& p : parts) *r.runs_to_first_finding += runs_up_to(p, *r.first_seed);
    }
  }

  // The lowest seeds' traces and the first findings', as search_tally::finish keeps them.
  void keep_traces() {
    search_result& r = merged.result;
    std::sort(traces.begin(), traces.end());
    for (std::size_t i = 0; i < traces.size(); ++i) {
      const std::string& file = traces[i].second;
      if (i < merged.request.traces_max || r.first_trace == file || r.first_other_trace == file) {
        r.trace_files.push_back(file);
      }
    }
  }
};

explore_row merge_row(const std::vector<shard_part>& parts) {
  row_merge merge{parts, {}, {}, {}, {}, false};
  merge.merge_requests();
  for (const shard_part& p : parts) merge.add(p);
  merge.count_seeds();
  merge.keep_traces();
  KVSIM_SIM_ASSERT(merge.merged.stopped_at_first_finding() == merge.stop_seed.has_value(),
                   "a merged row stops where a shard's did");
  return std::move(merge.merged);
}

}  // namespace

std::uint64_t trace_seed(const std::string& trace_file) {
  static const std::regex seed_name(R"(\.seed([0-9]{1,19})\.json$)");
  std::smatch match;
  if (!std::regex_search(trace_file, match, seed_name)) {
    throw input_error("trace " + spec::echoed(trace_file) +
                      ": not named <scenario>.<variant>.<strategy>.seed<N>.json");
  }
  return std::stoull(match[1].str());
}

std::vector<explore_row> merge_shards(const std::vector<shard_rows>& shards) {
  if (shards.empty()) throw usage_error("expected the shards' JSON files");
  // Each file is one shard; by index.
  std::map<std::uint64_t, const shard_rows*> by_index;
  std::optional<shard_spec> some;
  const shard_rows* some_file = nullptr;
  for (const shard_rows& file : shards) {
    if (file.rows.empty()) {
      throw input_error(file.file + ": no rows (an explore interrupted before its first search?)");
    }
    const shard_spec shard = file.rows.front().request.shard;
    for (const explore_row& row : file.rows) {
      if (row.request.shard.index != shard.index || row.request.shard.count != shard.count) {
        throw input_error(file.file + ": rows of shards " + shard_text(shard) + " and " +
                          shard_text(row.request.shard) + " (one file is one shard)");
      }
    }
    if (some && some->count != shard.count) {
      throw input_error(file.file + " is shard " + shard_text(shard) + " but " + some_file->file +
                        " is shard " + shard_text(*some) + ": shards of one search share N");
    }
    if (const auto [it, fresh] = by_index.emplace(shard.index, &file); !fresh) {
      throw input_error(file.file + " and " + it->second->file + " are both shard " +
                        shard_text(shard));
    }
    some = shard;
    some_file = &file;
  }
  if (by_index.size() != some->count) {
    std::uint64_t missing = 0;
    while (by_index.contains(missing)) ++missing;
    throw input_error("shard " + shard_text({missing, some->count}) + " is missing (" +
                      std::to_string(by_index.size()) + " of " + std::to_string(some->count) +
                      " shards given)");
  }

  // The same rows in every shard, matched by key.
  std::vector<std::map<std::string, const explore_row*>> rows_by_key;
  std::vector<std::string> files;
  std::vector<shard_spec> specs;
  for (const auto& [index, file] : by_index) {
    std::map<std::string, const explore_row*> keyed;
    for (const explore_row& row : file->rows) {
      if (!keyed.emplace(row_key(row), &row).second) {
        throw input_error(file->file + ": two rows of " + spec::echoed(row_key(row)));
      }
    }
    rows_by_key.push_back(std::move(keyed));
    files.push_back(file->file);
    specs.push_back(file->rows.front().request.shard);
  }
  for (std::size_t i = 0; i < rows_by_key.size(); ++i) {
    for (std::size_t other = 0; other < rows_by_key.size(); ++other) {
      for (const auto& [key, row] : rows_by_key[other]) {
        if (rows_by_key[i].contains(key)) continue;
        const bool cut_short =
            std::any_of(rows_by_key[i].begin(), rows_by_key[i].end(),
                        [](const auto& kv) { return kv.second->result.interrupted; });
        throw input_error(files[i] + " has no row " + spec::echoed(key) + ", which " + files[other] + " has" +
                          (cut_short ? " (it was interrupted: it lists the searches that ran)"
                                     : " (shards of different searches?)"));
      }
    }
  }

  std::vector<explore_row> merged;
  for (const explore_row& row : by_index.begin()->second->rows) {
    std::vector<shard_part> parts;
    for (std::size_t i = 0; i < rows_by_key.size(); ++i) {
      parts.push_back({specs[i], rows_by_key[i].at(row_key(row))});
    }
    check_same_search(parts, files);
    merged.push_back(merge_row(parts));
  }
  return merged;
}

}  // namespace kvsim::tools
