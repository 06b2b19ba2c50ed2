#!/usr/bin/env bash
# An explore stopped mid-way (SIGINT, as from Ctrl-C, and SIGTERM, to the whole process group
# including its workers) leaves only complete trace files: every file in --out loads, and no
# temporary file remains.
set -uo pipefail
set -m  # job control: each background job gets its own process group, workers included
kvsim="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
for signal in INT TERM; do
  out="$work/$signal"
  # b2_early_ack with B2 finds on almost every run, so traces are being written all the time.
  "$kvsim" explore --scenario b2_early_ack --variant B2 --budget 60s --jobs 2 \
    --out "$out" > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    [[ -n "$(ls "$out" 2>/dev/null)" ]] && break
    sleep 0.05
  done
  sleep 0.3
  kill -"$signal" -- -"$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  written=$(ls "$out" | wc -l)
  if [[ $written -eq 0 ]]; then echo "FAIL($signal): no trace was written before the signal"; failures=$((failures + 1)); fi
  if ls "$out" | grep -q '\.tmp$'; then echo "FAIL($signal): a temporary file remains"; failures=$((failures + 1)); fi
  for file in "$out"/*.json; do
    if ! "$kvsim" replay "$file" > /dev/null 2>&1; then
      echo "FAIL($signal): $file does not replay"
      failures=$((failures + 1))
    fi
  done
done
# Stopped mid-way, explore still reports what ran: the table, the JSON and the JUnit, the
# search in progress marked interrupted, and the exit code a shell expects (128 + signal).
for signal in INT TERM; do
  dir="$work/report-$signal"
  mkdir -p "$dir"
  "$kvsim" explore --all --budget 60s --jobs 2 --json "$dir/rows.json" --junit "$dir/junit.xml" \
    > "$dir/table.txt" 2> /dev/null &
  pid=$!
  sleep 3
  kill -"$signal" -- -"$pid" 2>/dev/null
  wait "$pid"
  code=$?
  expected=$([[ $signal == INT ]] && echo 130 || echo 143)
  [[ $code -eq $expected ]] || { echo "FAIL($signal): exit $code, expected $expected"; failures=$((failures + 1)); }
  grep -q "^interrupted after" "$dir/table.txt" ||
    { echo "FAIL($signal): the table does not say it was interrupted"; failures=$((failures + 1)); }
  python3 - "$dir/rows.json" <<'PY' || { echo "FAIL($signal): no JSON row marked interrupted"; failures=$((failures + 1)); }
import json, sys
rows = json.load(open(sys.argv[1]))
sys.exit(0 if rows and any(r["interrupted"] for r in rows) else 1)
PY
  grep -q "<testsuite " "$dir/junit.xml" || { echo "FAIL($signal): no JUnit"; failures=$((failures + 1)); }
done

[[ $failures -eq 0 ]] && echo "cli_kill_test: ok"
exit $((failures > 0))
