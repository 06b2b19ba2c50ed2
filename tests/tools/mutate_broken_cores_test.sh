#!/usr/bin/env bash
# Every hand-written broken core of tools/mutate/planted.txt must be caught by the search: a
# regression of the search (a fault no longer drawn, a checker that stopped firing, an
# adversary that lost a forgery) shows here as a planted core that survives, named. The budget
# is smaller than a mutation run's (300 runs, not 1,000): every plant is killed within it, and
# the search is deterministic, so a survivor is a regression, not bad luck. Shares the scratch
# tree of mutate_planted_test.sh (incremental: ~1 min once that one has built it).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: mutate_broken_cores_test.sh WORK_DIR [PLANT_FILE]}"
plants="${2:-$repo/tools/mutate/planted.txt}"
mkdir -p "$work"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

KVSIM_MUTATE_WORK="$work" python3 "$repo/tools/mutate/mutate.py" --plant "$plants" \
  --planted-only --runs 300 --no-unit --json "$out/rows.json" >"$out/table.txt" ||
  { cat "$out/table.txt"; echo "FAIL: mutate.py exited $? on the planted broken cores" >&2; exit 1; }
cat "$out/table.txt"
python3 - "$out/rows.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["mutants"]
escaped = [r for r in rows if r["status"] != "killed"]
if not rows:
    sys.exit("FAIL: no planted broken core was judged")
for r in escaped:
    print(f"FAIL: planted broken core {r['id']} ({r['file']}:{r['line']}) was {r['status']}, not killed",
          file=sys.stderr)
if escaped:
    sys.exit(1)
print(f"PASS: {len(rows)} planted broken cores, every one killed")
PY
