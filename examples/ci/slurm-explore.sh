#!/usr/bin/env bash
# One shard of `kvsim explore --all` per Slurm array task; examples/ci/slurm-merge.sh merges
# them (examples/ci/README.md). Submit from the repository root, after tools/run.sh build:
#
#   jobid=$(sbatch --parsable examples/ci/slurm-explore.sh)
#   sbatch --dependency=afterany:$jobid examples/ci/slurm-merge.sh kvsim-shards/$jobid
#
# The array is 0..N-1 (--array=0-3 below: 4 shards; any 0-(N-1) works, given on the command
# line too: sbatch --array=0-15 ...). Task i runs the seeds s with (s-1) mod N == i.
# Environment: KVSIM (the binary, default build/bin/kvsim), KVSIM_RUNS (seeds per search,
# default 100000), KVSIM_SHARD_DIR (default kvsim-shards/<array job id>).
#SBATCH --job-name=kvsim-explore
#SBATCH --array=0-3
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=kvsim-explore-%A_%a.log
set -euo pipefail

cd "${SLURM_SUBMIT_DIR:-.}"
: "${SLURM_ARRAY_TASK_ID:?not an array task: submit with sbatch (see the top of this file)}"
: "${SLURM_ARRAY_TASK_COUNT:?not an array task: submit with sbatch (see the top of this file)}"
index=$SLURM_ARRAY_TASK_ID
count=$SLURM_ARRAY_TASK_COUNT
if (( index >= count )); then
  # --array=1-4 or 0-7:2 would leave a shard without its task: the merge would miss it.
  echo "slurm-explore.sh: task $index of $count: the array must be 0-$((count - 1))" >&2
  exit 2
fi
kvsim=${KVSIM:-build/bin/kvsim}
runs=${KVSIM_RUNS:-100000}
dir=${KVSIM_SHARD_DIR:-kvsim-shards/${SLURM_ARRAY_JOB_ID:-local}}
mkdir -p "$dir"

# Exit 1 (an expectation did not hold) still wrote the JSON: the merge judges the whole. So
# does an explore stopped by Slurm's time limit (SIGTERM: 143): its rows say interrupted.
"$kvsim" explore --all --runs "$runs" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  --shard "$index/$count" \
  --json "$dir/shard-$index.json" --junit "$dir/shard-$index.xml" --out "$dir/traces-$index"
