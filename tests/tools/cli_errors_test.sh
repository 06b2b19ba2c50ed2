#!/usr/bin/env bash
# Every subcommand, given a wrong command, flag, value, file or name: exactly one error line on
# stderr starting with "kvsim", nothing on stdout, exit 2.
set -uo pipefail
kvsim="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
expect_usage_error() {
  local stdout stderr rc
  stderr="$( { stdout="$("$kvsim" "$@")"; } 2>&1 )"
  rc=$?
  stdout="$("$kvsim" "$@" 2>/dev/null)"
  if [[ $rc -ne 2 ]]; then echo "FAIL: kvsim $* exited $rc, expected 2"; failures=$((failures + 1)); fi
  if [[ -n "$stdout" ]]; then echo "FAIL: kvsim $* printed to stdout"; failures=$((failures + 1)); fi
  if [[ $(wc -l <<< "$stderr") -ne 1 || "$stderr" != kvsim* ]]; then
    echo "FAIL: kvsim $* should print one 'kvsim ...' line, got: $stderr"
    failures=$((failures + 1))
  fi
}
printf '{"format": "kvsim-trace", "version": 1, "kvs' > "$work/truncated.json"
printf 'not json at all' > "$work/garbage.json"
printf '{"format": "kvsim-catalogue", "version": 1, "scenarios": [' > "$work/bad_catalogue.json"

expect_usage_error frobnicate
expect_usage_error
expect_usage_error --no-such-flag
expect_usage_error demo extra
expect_usage_error list --frobnicate
expect_usage_error list --catalogue "$work/missing.json"
expect_usage_error list --catalogue "$work/bad_catalogue.json"
expect_usage_error run
expect_usage_error run --scenario no_such_scenario
expect_usage_error run --scenario page42 --variant B99
expect_usage_error run --scenario page42 --seed -1
expect_usage_error run --scenario page42 --seed 12x
expect_usage_error run --scenario page42 --strategy pct:0
expect_usage_error run --scenario page42 --strategy wander
expect_usage_error run --scenario page42 --strategy dfs
expect_usage_error run --scenario page42 --seed
expect_usage_error run --scenario page42 --seed 1 --seed 2
expect_usage_error run --scenario page42 --trace "$work/no/such/dir/t.json"
expect_usage_error explore
expect_usage_error explore --all --scenario page42
expect_usage_error explore --all --variant B1
expect_usage_error explore --scenario page42 --budget 10
expect_usage_error explore --scenario page42 --budget 1s --runs 5
expect_usage_error explore --scenario page42 --runs 0
expect_usage_error explore --scenario page42 --jobs 0
expect_usage_error explore --scenario page42 --shard 3/3
expect_usage_error explore --scenario page42 --shard x
expect_usage_error explore --scenario page42 --strategy dfs --jobs 2
expect_usage_error explore --scenario page42 --strategy dpor --jobs 2
expect_usage_error explore --scenario page42 --strategy dpor --max-faults 17
expect_usage_error explore --scenario page42 --max-faults 1
expect_usage_error explore --scenario page42 --strategy dpor:
expect_usage_error run --scenario page42 --strategy dpor
expect_usage_error merge
expect_usage_error merge "$work/garbage.json"
expect_usage_error merge "$work/missing.json"
expect_usage_error check-declarations
expect_usage_error check-declarations --scenario no_such_scenario
expect_usage_error check-declarations --all --runs x
expect_usage_error replay
expect_usage_error replay "$work/missing.json"
expect_usage_error replay "$work/truncated.json"
expect_usage_error replay "$work/garbage.json"
expect_usage_error replay "$work/garbage.json" --strict --lenient
expect_usage_error shrink "$work/truncated.json" -o "$work/out.json"
expect_usage_error shrink "$work/truncated.json"
expect_usage_error export "$work/truncated.json" --format text -o "$work/out.txt"
expect_usage_error export "$work/truncated.json" --format svg -o "$work/out.txt"
expect_usage_error export "$work/truncated.json" -o "$work/out.txt"
[[ -e "$work/out.json" || -e "$work/out.txt" ]] && { echo "FAIL: a failed command wrote output"; failures=$((failures + 1)); }

# A trace with no finding cannot be shrunk; one whose scenario was edited does not replay.
"$kvsim" run --scenario page42 --seed 1 --trace "$work/clean.json" > /dev/null
expect_usage_error shrink "$work/clean.json" -o "$work/out.json"
sed 's/"pages_per_rank": 8/"pages_per_rank": -3/' "$work/clean.json" > "$work/edited.json"
expect_usage_error replay "$work/edited.json"

[[ $failures -eq 0 ]] && echo "cli_errors_test: ok"
exit $((failures > 0))
