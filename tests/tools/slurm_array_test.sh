#!/usr/bin/env bash
# The Slurm path of examples/ci, run as Slurm would run it: examples/ci/slurm-explore.sh once
# per array task (SLURM_ARRAY_TASK_ID 0..3 of SLURM_ARRAY_TASK_COUNT 4, in the submit
# directory), then examples/ci/slurm-merge.sh on their directory. The merge must be the
# unsharded `kvsim explore --all`: the same exit code, table, JSON rows and JUnit, clock
# readings and trace directories aside. And a shard gone missing is one error line, exit 2,
# nothing written.
# usage: slurm_array_test.sh KVSIM REPO_ROOT
set -uo pipefail
kvsim="$(realpath "$1")"
repo="$(realpath "$2")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

runs=40  # --all --runs 40: breaking rows stop at seeds in every shard; some rows unmet (exit 1)
job=4242
for task in 0 1 2 3; do
  SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_JOB_ID=$job SLURM_SUBMIT_DIR="$work" \
    SLURM_CPUS_PER_TASK=$((task % 2 + 1)) KVSIM="$kvsim" KVSIM_RUNS=$runs \
    bash "$repo/examples/ci/slurm-explore.sh" > "task-$task.log" 2>&1
  rc=$?
  [[ $rc -le 1 && -s kvsim-shards/$job/shard-$task.json ]] ||
    fail "array task $task exited $rc without its shard: $(tail -3 "task-$task.log")"
done
SLURM_SUBMIT_DIR="$work" KVSIM="$kvsim" bash "$repo/examples/ci/slurm-merge.sh" "kvsim-shards/$job" \
  > merged.txt 2> merge.err
merged_rc=$?
"$kvsim" explore --all --runs $runs --json whole.json --junit whole.xml --out traces > whole.txt 2> whole.err
whole_rc=$?

[[ $merged_rc -eq $whole_rc ]] || fail "merge exited $merged_rc, the unsharded explore $whole_rc: $(cat merge.err)"
python3 - "kvsim-shards/$job" <<'EOF' || failures=$((failures + 1))
import json, re, sys
shards = sys.argv[1]

def masked(text):
    # Where the traces lie, the clock, and how the search was split.
    text = re.sub(re.escape(shards) + r"/traces-[0-9]+/", "traces/", text)
    text = re.sub(r"[0-9]+\.[0-9]+s\b", "T", text)
    text = re.sub(r'time="[^"]*"', "time=T", text)
    return re.sub(r"jobs [0-9]+\)|[0-9]+ shards merged\)", "HOW)", text)

def rows(path):
    rows = json.loads(masked(open(path).read()))
    for row in rows:
        for key in ("seconds", "seconds_to_first_finding"):
            row.pop(key, None)
    return rows

ok = True
for what, merged, whole in [("table", "merged.txt", "whole.txt"),
                            ("JUnit", shards + "/merged.xml", "whole.xml")]:
    if masked(open(merged).read()) != masked(open(whole).read()):
        print(f"FAIL: the merged {what} differs from the unsharded one")
        ok = False
if rows(shards + "/merged.json") != rows("whole.json"):
    print("FAIL: the merged JSON rows differ from the unsharded ones")
    ok = False
sys.exit(0 if ok else 1)
EOF

# A task outside 0..N-1 (an array not 0-(N-1)) refuses to run a shard nobody would merge.
SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_COUNT=4 SLURM_SUBMIT_DIR="$work" KVSIM="$kvsim" \
  bash "$repo/examples/ci/slurm-explore.sh" > /dev/null 2>&1
[[ $? -eq 2 ]] || fail "task 4 of 4 should exit 2"

# A shard that wrote nothing (a task that died): the merge names it, writes nothing.
mkdir partial
cp "kvsim-shards/$job"/shard-{0,1,3}.json partial/
SLURM_SUBMIT_DIR="$work" KVSIM="$kvsim" bash "$repo/examples/ci/slurm-merge.sh" partial > partial.out 2> partial.err
rc=$?
[[ $rc -eq 2 ]] || fail "a merge without shard 2 exited $rc, expected 2"
if [[ $(wc -l < partial.err) -ne 1 ]] || ! grep -q "shard 2/4 is missing" partial.err; then
  fail "a merge without shard 2 should say so in one line, got: $(cat partial.err)"
fi
[[ ! -s partial.out && ! -e partial/merged.json && ! -e partial/merged.xml ]] ||
  fail "a refused merge wrote something"

[[ $failures -eq 0 ]] && echo "slurm_array_test: ok (merge of 4 array tasks = the unsharded explore, exit $whole_rc)"
exit $((failures > 0))
