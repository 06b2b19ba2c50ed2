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
expect_usage_error explore --scenario page42 --strategy dfs
expect_usage_error explore --scenario page42 --strategy dfs:2
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

# Hostile inputs: each is one error line naming the problem, exit 2; before, deep
# nesting crashed (SIGSEGV, exit 139) and huge topologies took gigabytes or ended in
# "internal error: std::bad_alloc".
expect_error_line() {
  local wanted="$1" stderr rc
  shift
  stderr="$("$kvsim" "$@" 2>&1 >/dev/null)"
  rc=$?
  if [[ $rc -ne 2 || $(wc -l <<< "$stderr") -ne 1 || "$stderr" != *"$wanted"* ]]; then
    echo "FAIL: kvsim $* should exit 2 with one line containing '$wanted', got $rc: ${stderr:0:300}"
    failures=$((failures + 1))
  fi
}
brackets() { head -c "$1" /dev/zero | tr '\0' "$2"; }
{ printf '{"format": '; brackets 100000 '['; brackets 100000 ']'; printf '}'; } > "$work/deep.json"
expect_error_line "deep.json: JSON nests deeper than 64 levels (the bracket at byte 74 opens level 65" \
  replay "$work/deep.json"
expect_error_line "JSON nests deeper than 64 levels" run --catalogue "$work/deep.json" --scenario x
{ printf '{"format": "kvsim-catalogue", "version": 1, "scenarios": '; brackets 20000 '['
  brackets 20000 ']'; printf '}'; } > "$work/deep_catalogue.json"
expect_error_line "nests deeper than 64 levels" list --catalogue "$work/deep_catalogue.json"
sed 's/"prefill_ranks": 1/"prefill_ranks": 10000/' "$work/clean.json" > "$work/ranks.json"
expect_error_line "scenario 'page42': field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 10000)" \
  replay "$work/ranks.json"
catalogue_with() {
  printf '{"format": "kvsim-catalogue", "version": 1, "scenarios": [{"name": "big", "kind": "transfer", "topology": {%s}, "requests": [{"room": 1}], "expect": {"breaking_variant": "B1", "invariant": "I3"}}]}' "$1" > "$work/big.json"
}
catalogue_with '"prefill_ranks": 10000, "decode_ranks": 10000'
expect_error_line "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 10000)" \
  run --catalogue "$work/big.json" --scenario big
catalogue_with '"prefill_ranks": 100000'
expect_error_line "field 'topology.prefill_ranks' must be an integer between 1 and 64 (got 100000)" \
  explore --catalogue "$work/big.json" --scenario big --runs 1
catalogue_with '"pages_per_rank": 4294967295'
expect_error_line "field 'topology.pages_per_rank' must be an integer between 1 and 512 (got 4294967295)" \
  run --catalogue "$work/big.json" --scenario big
catalogue_with '"page_bytes": 4294967295'
expect_error_line "field 'topology.page_bytes' must be an integer between 17 and 1048576 (got 4294967295)" \
  run --catalogue "$work/big.json" --scenario big
catalogue_with '"prefill_ranks": 64, "decode_ranks": 64, "pages_per_rank": 512, "page_bytes": 8192'
expect_error_line "field 'topology' asks for (prefill_ranks + decode_ranks) x pages_per_rank x page_bytes = 128 x 512 x 8192 = 536870912 bytes of simulated memory, more than 268435456 (256 MiB)" \
  run --catalogue "$work/big.json" --scenario big

# The canary is a variant name everywhere: list shows it as the canary scenario's breaking
# variant, and run, explore and replay take it (it runs the deliberately broken core, B1's).
[[ "$("$kvsim" list)" == *$'\ncanary '*' canary '* ]] || { echo "FAIL: list does not show canary's variant"; failures=$((failures + 1)); }
"$kvsim" run --scenario canary --variant canary --seed 1 --trace "$work/canary.json" > /dev/null
rc=$?; [[ $rc -eq 1 ]] || { echo "FAIL: run --scenario canary --variant canary exited $rc, expected 1 (a finding)"; failures=$((failures + 1)); }
"$kvsim" replay "$work/canary.json" > /dev/null
rc=$?; [[ $rc -eq 0 ]] || { echo "FAIL: replay of the canary's trace exited $rc, expected 0"; failures=$((failures + 1)); }
"$kvsim" explore --scenario canary --variant canary --runs 20 > /dev/null
rc=$?; [[ $rc -eq 0 ]] || { echo "FAIL: explore --scenario canary --variant canary exited $rc, expected 0 (found, as expected)"; failures=$((failures + 1)); }
expect_usage_error run --scenario page42 --variant Canary

[[ $failures -eq 0 ]] && echo "cli_errors_test: ok"
exit $((failures > 0))
