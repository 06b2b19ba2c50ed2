#!/usr/bin/env bash
# The exhaustion table of docs/model-checking.md: every catalogue scenario with `safe` under
# `--strategy dpor` with at most K faults (K = 0, 1, 2), each search capped at a time budget
# (exhausted or not, runs, distinct states, terminal outcomes, seconds); then every breaking
# variant with at most 2 faults, stopping at its first finding (runs to it, the deviation
# bound of the stage that found it). Prints Markdown on stdout.
#
#   tools/dpor_table.sh [BUDGET_PER_SEARCH (default 20s)] [KVSIM (default build/bin/kvsim)]
# (from the repository root; CATALOGUE=FILE for another catalogue)
set -euo pipefail
budget="${1:-20s}"
kvsim="${2:-build/bin/kvsim}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

scenarios=$("$kvsim" list --json | python3 -c 'import json,sys; [print(s["name"]) for s in json.load(sys.stdin)]')

row() {  # scenario variant max_faults stop(0/1) -> one JSON row in $work/row.json
  local extra=()
  [[ "$4" == 1 ]] && extra=(--stop-at-first)
  rm -f "$work/row.json"
  local variant="$2"
  [[ "$variant" == canary ]] && variant=B1  # the canary is page42 on a core broken as B1
  "$kvsim" explore --scenario "$1" --variant "$variant" --strategy dpor --max-faults "$3" \
    --budget "$budget" "${extra[@]}" --json "$work/row.json" >/dev/null 2>"$work/err" || true
  if [[ ! -s "$work/row.json" ]]; then
    echo "dpor_table: $1 $2: $(tail -1 "$work/err")" >&2
    exit 2
  fi
}

echo "| scenario | K | exhausted | runs | distinct states | outcomes | seconds |"
echo "|---|---|---|---|---|---|---|"
for s in $scenarios; do
  for k in 0 1 2; do
    row "$s" safe "$k" 0
    python3 - "$work/row.json" "$s" "$k" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {'yes' if r['exhausted'] else 'no'} | {r['runs']} | "
      f"{r['distinct_states']} | {r['distinct_outcomes']} | {r['seconds']:.2f} |")
EOF
  done
done

echo
echo "| scenario | variant | K | result | runs to first finding | seconds | found within deviations |"
echo "|---|---|---|---|---|---|---|"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
for s in (c["scenarios"] if isinstance(c, dict) else c):
    for e in [s["expect"]] + s["expect"].get("also", []):
        print(s["name"], e["breaking_variant"])' "${CATALOGUE:-scenarios/catalogue.json}" | while read -r s v; do
  row "$s" "$v" 2 1
  python3 - "$work/row.json" "$s" "$v" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[0]
first = r.get("runs_to_first_finding")
dev = r.get("found_within_deviations")
print(f"| {sys.argv[2]} | {sys.argv[3]} | 2 | {r['result']} | {first if first is not None else '-'} | "
      f"{r['seconds']:.2f} | {dev if dev is not None else ('full search' if first else '-')} |")
EOF
done
