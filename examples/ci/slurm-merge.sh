#!/usr/bin/env bash
# The merge step after examples/ci/slurm-explore.sh: every shard's JSON in DIR, merged into
# the table (this job's log), DIR/merged.json and DIR/merged.xml (JUnit) of the unsharded
# search. Submit it to run once the array has ended, whatever its tasks' exit codes (a shard
# that wrote nothing is named by the merge, exit 2):
#
#   sbatch --dependency=afterany:$jobid examples/ci/slurm-merge.sh kvsim-shards/$jobid
#
# Exit: kvsim merge's: 0 every expectation held, 1 one did not or a shard was interrupted,
# 2 a shard missing, repeated or of another search.
#SBATCH --job-name=kvsim-merge
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
#SBATCH --output=kvsim-merge-%j.log
set -euo pipefail

cd "${SLURM_SUBMIT_DIR:-.}"
dir=${1:?usage: slurm-merge.sh SHARD_DIR (the KVSIM_SHARD_DIR of the array job)}
kvsim=${KVSIM:-build/bin/kvsim}
shopt -s nullglob
shards=("$dir"/shard-*.json)
if (( ${#shards[@]} == 0 )); then
  echo "slurm-merge.sh: no shard-*.json in $dir (did the array job run there?)" >&2
  exit 2
fi
"$kvsim" merge --json "$dir/merged.json" --junit "$dir/merged.xml" "${shards[@]}"
