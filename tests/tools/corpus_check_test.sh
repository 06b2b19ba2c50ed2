#!/usr/bin/env bash
# kvsim check fires: on a broken core (--variant B1) it names the bug's traces and exits 1, and
# the command it prints reproduces the finding; a safe trace with one decision edited exits 1;
# bad input is one line on stderr, nothing on stdout, exit 2; the JUnit report parses and has
# one test case per trace.
# usage: corpus_check_test.sh KVSIM CORPUS_DIR
set -uo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sanitizer_notes.sh"
kvsim="$1"
corpus="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_bad_input NAMED ARGS...: exit 2, nothing on stdout, one "kvsim check: " line on
# stderr that contains NAMED (what it must name; "" for anything).
expect_bad_input() {
  local named="$1" stdout stderr rc
  shift
  stdout="$("$kvsim" "$@" 2> "$work/stderr")"
  rc=$?
  without_sanitizer_notes "$work/stderr"
  stderr="$(cat "$work/stderr")"
  [[ $rc -eq 2 ]] || fail "kvsim $* exited $rc, expected 2"
  [[ -z "$stdout" ]] || fail "kvsim $* printed to stdout: $stdout"
  if [[ $(wc -l <<< "$stderr") -ne 1 || "$stderr" != "kvsim check: "* ]]; then
    fail "kvsim $* should print one 'kvsim check: ...' line, got: $stderr"
  fi
  [[ "$stderr" == *"$named"* ]] || fail "kvsim $*: the error does not name $named: $stderr"
}

# JUnit XML: testcases and failures as counted by a real XML parser.
junit_counts() {
  python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
print(len(cases), sum(1 for c in cases if c.find("failure") is not None))' "$1"
}

traces=$(ls "$corpus"/*.json | wc -l)

# Green: the corpus holds on safe.
out="$("$kvsim" check "$corpus" --junit "$work/green.xml")" || fail "the corpus does not hold on safe: $out"
[[ "$out" == *"$traces traces, $traces held, 0 regressions"* ]] || fail "summary: $out"
[[ "$(junit_counts "$work/green.xml")" == "$traces 0" ]] || fail "green JUnit: $(junit_counts "$work/green.xml")"

# What check reports for a trace is what `kvsim replay --variant` does with it: the same prefix
# fit, the same (absent) finding.
"$kvsim" check "$corpus" --json > "$work/green.json"
for trace in "$corpus"/*.json; do
  mode="$(python3 -c 'import json,sys; r=[r for r in json.load(open(sys.argv[1]))["rows"] if r["file"]==sys.argv[2]][0]; print(r["mode"], r["decisions_fit"])' "$work/green.json" "$trace")"
  read -r how fit <<< "$mode"
  flags=(--variant safe)
  [[ $how == lenient ]] && flags+=(--lenient)
  replayed="$("$kvsim" replay "$trace" "${flags[@]}" --json)"
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["replayed"]==int(sys.argv[2]) and r["finding"] is None and r["variant"]=="safe", r' \
    "$replayed" "$fit" 2> /dev/null || fail "kvsim replay $trace ${flags[*]} disagrees with check (fit $fit): $replayed"
done

# Red: on B1, the B1 traces find again.
out="$("$kvsim" check "$corpus" --variant B1 --junit "$work/red.xml")"
rc=$?
[[ $rc -eq 1 ]] || fail "check --variant B1 exited $rc, expected 1"
grep -q '^page42\.B1\.json .*REGRESSION' <<< "$out" || fail "page42.B1.json not named a regression: $out"
grep -q '^canary\.B1\.json .*REGRESSION' <<< "$out" || fail "canary.B1.json not named a regression"
read -r cases failed <<< "$(junit_counts "$work/red.xml")"
[[ $cases -eq $traces && $failed -ge 2 ]] || fail "red JUnit: $cases cases, $failed failures"
grep -q "reproduce: kvsim replay $corpus/page42.B1.json --lenient" "$work/red.xml" ||
  fail "the JUnit failure lacks the reproduce command"
# The printed command reproduces the finding.
reproduce="$(grep -A2 '^page42\.B1\.json' <<< "$out" | sed -n 's/^ *reproduce: kvsim //p')"
[[ -n "$reproduce" ]] || fail "no reproduce line under page42.B1.json"
# shellcheck disable=SC2086  # the printed command is words
"$kvsim" $reproduce | grep -q '^replayed: I3' || fail "'kvsim $reproduce' does not find I3"

# Red: a safe trace with one decision edited (as if the core now offered one more choice).
mkdir "$work/edited"
cp "$corpus"/*.json "$work/edited/"
safe_trace="$(ls "$work/edited"/*.safe.*.json | head -n 1)"
[[ -n "$safe_trace" ]] || fail "the corpus holds no safe trace"
python3 - "$safe_trace" <<'EOF'
import json, sys
path = sys.argv[1]
t = json.load(open(path))
t["decisions"][3][1] += 1  # options
h = 0xcbf29ce484222325  # the trace's decision_hash (sim/decision.cc): FNV-1a over the fields
for d in t["decisions"]:
    for value in (d[0], d[1], d[2], int(d[3])):
        for i in range(8):
            h ^= (value >> (8 * i)) & 0xFF
            h = (h * 0x100000001B3) % 2**64
t["decision_hash"] = "%016x" % h
json.dump(t, open(path, "w"))
EOF
out="$("$kvsim" check "$work/edited")"
rc=$?
[[ $rc -eq 1 ]] || fail "an edited safe trace: exit $rc, expected 1"
name="$(basename "$safe_trace")"
grep -q "^${name//./\\.} .*REGRESSION" <<< "$out" || fail "$name not named a regression: $out"
grep -q "diverged at decision 3" <<< "$out" || fail "no divergence at decision 3: $out"
[[ "$out" == *"1 regression"* ]] || fail "only the edited trace regresses: $out"

# Bad input: exit 2, one line, naming what is wrong.
mkdir "$work/empty" "$work/readme_only"
echo "notes" > "$work/readme_only/README.md"
expect_bad_input "" check
expect_bad_input no_such_dir check "$work/no_such_dir"
expect_bad_input empty check "$work/empty"
expect_bad_input readme_only check "$work/readme_only"
expect_bad_input B99 check "$corpus" --variant B99
expect_bad_input out.xml check "$corpus" --junit "$work/no/such/dir/out.xml"
mkdir "$work/malformed"
cp "$corpus"/*.json "$work/malformed/"
printf '{"format": "kvsim-trace", "version": 1, "kv' > "$work/malformed/truncated.json"
expect_bad_input truncated.json check "$work/malformed"
mkdir "$work/foreign"
echo '{"format": "kvsim-catalogue", "version": 1, "scenarios": []}' > "$work/foreign/a.json"
expect_bad_input a.json check "$work/foreign"

[[ $failures -eq 0 ]] && echo "corpus_check_test: ok"
exit $((failures > 0))
