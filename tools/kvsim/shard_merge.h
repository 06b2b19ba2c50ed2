#pragma once
// `kvsim merge`: the rows of the shards of one explore (--shard I/N, --json), combined into
// the rows the unsharded search reports (seconds aside: see merge_shards). Shards run
// disjoint seeds, and a search counts its runs in seed order (search_tally.h), so:
// - a search that ran all its seeds: runs, findings and probe hits are sums; the first
//   finding is the lowest seed's, and the runs up to it are each shard's seeds up to it;
// - a search that stopped at its first finding (stopped_at_first_finding): the merged one
//   stops at the lowest of the shards' first findings, s, and counts what the unsharded
//   search would have: each shard's seeds up to s, the findings of seeds up to s (from
//   finding_seeds), and no probes (explore reports none for such a row);
// - finding_seeds: merged in seed order, the first 1000; traces: the 10 lowest seeds' of
//   those counted, and the first finding's and first other finding's.
#include <string>
#include <vector>

#include "tools/kvsim/explore_report.h"
#include "tools/kvsim/seed_plan.h"

namespace kvsim::tools {

// One shard's rows, as its explore --json wrote them (explore_rows_json.h).
struct shard_rows {
  std::string file;  // names the shard in errors
  std::vector<explore_row> rows;
};

// The merged rows, in the order of shard 0's file. input_error (one line) unless the shards
// are exactly the shards 0..N-1 of one search: each file one shard, no index twice or
// missing, one N, and the same rows (scenario, variant, strategy, checkers) with the same
// expectations in every file. The merged seconds are the shards' sums (the time spent over
// all of them), seconds_to_first_finding the finding shard's own.
std::vector<explore_row> merge_shards(const std::vector<shard_rows>& shards);

// The seed of a trace from its file name (trace_path: ...seed<N>.json); input_error otherwise.
std::uint64_t trace_seed(const std::string& trace_file);

}  // namespace kvsim::tools
