#!/usr/bin/env bash
# Regenerates tests/corpus/, the traces `kvsim check` replays as regression tests
# (tests/corpus/README.md says what they guard):
#   tools/make_corpus.sh                      into tests/corpus/, with build/bin/kvsim
#   tools/make_corpus.sh --kvsim PATH --out DIR
# For every catalogue scenario and every breaking variant it declares (expect and expect.also;
# the canary's broken core is B1): the shortest finding of the expected invariant among the
# first findings of a random search over seeds 1..$search_runs, shrunk, as SCENARIO.VARIANT.json.
# Then a few runs of safe, as SCENARIO.safe.seedN.json, so the strict-replay path is guarded.
# Last, `kvsim check` must hold on what was written, or the script fails.
#
# Deterministic: the searches run one job over fixed seeds in order (--jobs 1, --runs N, the
# random strategy draws every decision from the seed), shrink is a deterministic delta
# debugging of the trace it is given, and the safe runs have fixed seeds. The same build
# writes the same files; a change of the core, the worlds or the catalogue may write other
# ones (which is why a regenerated corpus is reviewed like code).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kvsim="$repo_root/build/bin/kvsim"
out="$repo_root/tests/corpus"
search_runs=200
# Safe runs kept for the strict path: the two worlds (transfer, prefetch), deadlines and
# quarantines, a dead peer, the churn of bounded tables under message faults, and a rank serving
# many requests at once.
safe_runs=(page42:1 b12_deadline:1 peer_death:2 hicache_local_active:1 room_churn:1 batch_pool_pressure:1 store_done_by_room:1)

while [[ $# -gt 0 ]]; do
  case "$1" in
    --kvsim) kvsim="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make_corpus.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$kvsim" ]] || { echo "make_corpus.sh: no kvsim at $kvsim (build it first)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
# Every trace this script writes is replaced, so a renamed scenario leaves no stale file; the
# README and hand-added traces (manual.*.json, tests/corpus/README.md) stay.
find "$out" -maxdepth 1 -name '*.json' ! -name 'manual.*' -delete

# scenario, breaking variant as kvsim takes it, expected invariant: one line per breaking row.
python3 - "$repo_root/scenarios/catalogue.json" > "$work/rows.txt" <<'EOF'
import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    for e in [s["expect"]] + s["expect"].get("also", []):
        variant = "B1" if e["breaking_variant"] == "canary" else e["breaking_variant"]
        print(s["name"], variant, e["invariant"])
EOF

while read -r scenario variant invariant; do
  found="$work/$scenario.$variant"
  mkdir -p "$found"
  "$kvsim" explore --scenario "$scenario" --variant "$variant" --runs "$search_runs" \
    --jobs 1 --out "$found" > "$found.log" || true  # the row's verdict is judged below
  shortest="$(python3 - "$found" "$invariant" <<'EOF'
import json, pathlib, sys
best = None
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    t = json.load(open(path))
    if (t.get("finding") or {}).get("invariant") != sys.argv[2]:
        continue
    if best is None or len(t["decisions"]) < best[0]:
        best = (len(t["decisions"]), path)
print(best[1] if best else "")
EOF
)"
  if [[ -z "$shortest" ]]; then
    echo "make_corpus.sh: $scenario with $variant found no $invariant in $search_runs runs" >&2
    exit 1
  fi
  "$kvsim" shrink "$shortest" -o "$out/$scenario.$variant.json" > "$found.shrink.log"
  echo "$scenario.$variant.json: $(tail -n 1 "$found.shrink.log")"
done < "$work/rows.txt"

for run in "${safe_runs[@]}"; do
  scenario="${run%%:*}"
  seed="${run##*:}"
  "$kvsim" run --scenario "$scenario" --variant safe --seed "$seed" \
    --trace "$out/$scenario.safe.seed$seed.json" > /dev/null
  echo "$scenario.safe.seed$seed.json"
done

du -ch "$out"/*.json | tail -n 1
"$kvsim" check "$out"
