#!/usr/bin/env bash
# tests/tools/cli_outputs_test.sh KVSIM
#
# Outputs done right: every output path is checked before any search starts (a bad one costs
# one error line, exit 2, no table and no stray file); "-" is standard output; a symlink or a
# device is written through, never replaced; a full disk is named as such in one line,
# whatever --jobs; off a terminal, explore prints a progress line every 10 s.
set -uo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sanitizer_notes.sh"
kvsim="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvsim-outputs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_refused NAME ARGS...: exit 2 at once, one line on stderr, nothing on stdout.
expect_refused() {
  local name="$1"
  shift
  local before after
  before="$(find . | sort | grep -v -x -e ./out.txt -e ./err.txt)"
  "$kvsim" "$@" > out.txt 2> err.txt
  local code=$?
  without_sanitizer_notes err.txt
  after="$(find . | sort | grep -v -x -e ./out.txt -e ./err.txt)"
  [[ $code -eq 2 ]] || fail "$name: exit $code, expected 2"
  [[ ! -s out.txt ]] || fail "$name: wrote to stdout: $(head -c 200 out.txt)"
  [[ $(wc -l < err.txt) -eq 1 ]] || fail "$name: expected one error line, got: $(cat err.txt)"
  [[ "$before" == "$after" ]] || fail "$name: left files behind: $(diff <(echo "$before") <(echo "$after"))"
}

# A budget that would take a minute: a refusal that comes after the search would show.
expect_refused "explore --junit in a missing directory" explore --all --budget 60s --junit /nonexistent/j.xml
expect_refused "explore --json in a missing directory" explore --all --budget 60s --json /nonexistent/rows.json
mkdir adir
expect_refused "explore --json naming a directory" explore --all --budget 60s --json adir
touch afile
expect_refused "explore --out through a file" explore --all --budget 60s --out afile/traces
expect_refused "explore --json - and --junit -" explore --all --budget 60s --json - --junit -
expect_refused "run --trace in a missing directory" run --scenario page42 --trace /nonexistent/t.json
expect_refused "run --trace -" run --scenario page42 --trace -

# A trace to export and shrink.
"$kvsim" run --scenario page42 --variant B1 --trace t.json > /dev/null
[[ -f t.json ]] || fail "run --trace wrote no trace"
expect_refused "shrink -o in a missing directory" shrink t.json -o /nonexistent/s.json
expect_refused "export -o in a missing directory" export t.json --format text -o /nonexistent/x.txt

# "-" is standard output, and no file named "-" appears.
"$kvsim" export t.json --format text -o - > text.txt 2> err.txt || fail "export -o - failed: $(cat err.txt)"
[[ ! -e ./- ]] || fail "export -o - wrote a file named '-'"
grep -q "page42" text.txt || fail "export -o - printed no timeline"
"$kvsim" explore --scenario page42 --variant B1 --runs 5 --json - > rows.json 2> table.txt ||
  fail "explore --json - failed: $(cat table.txt)"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' rows.json || fail "explore --json - is not JSON alone"
grep -q "every expectation held" table.txt || fail "explore --json -: the table did not go to stderr"

# A symlink is written through, not replaced (as /dev/stdout is a symlink).
echo old > target.json
ln -s target.json link.json
"$kvsim" explore --scenario page42 --variant B1 --runs 5 --json link.json > /dev/null ||
  fail "explore --json through a symlink failed"
[[ -L link.json ]] || fail "the symlink was replaced by a file"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' target.json || fail "the symlink's target holds no JSON"
"$kvsim" explore --scenario page42 --variant B1 --runs 5 --json /dev/stdout > through.json 2> /dev/null ||
  fail "explore --json /dev/stdout failed"
grep -q '"scenario": "page42"' through.json || fail "--json /dev/stdout did not reach stdout"

# A full disk: one line that says so, exit 2, with one job or several.
"$kvsim" explore --scenario page42 --variant B1 --runs 5 --json /dev/full > /dev/null 2> err.txt
code=$?
without_sanitizer_notes err.txt
[[ $code -eq 2 && $(wc -l < err.txt) -eq 1 ]] && grep -q "No space left on device" err.txt ||
  fail "--json /dev/full: exit $code, $(cat err.txt)"
# Traces on a full file system, when this machine lets us mount a small one (root in a
# container often may not: then this case is skipped, said so).
if mkdir small && mount -t tmpfs -o size=64k tmpfs small 2> /dev/null; then
  for jobs in 1 2; do
    rm -rf small/traces
    "$kvsim" explore --scenario b2_early_ack --variant B2 --runs 400 --jobs $jobs --out small/traces > /dev/null 2> err.txt
    code=$?
    without_sanitizer_notes err.txt
    [[ $code -eq 2 && $(wc -l < err.txt) -eq 1 ]] && grep -q "No space left on device" err.txt &&
      ! grep -q "internal error" err.txt ||
      fail "--out on a full file system, --jobs $jobs: exit $code, $(cat err.txt)"
  done
  ls small/traces | grep -q '\.tmp$' && fail "a temporary trace remains on the full file system"
  umount small
else
  echo "cli_outputs_test: (skipped the full-file-system trace case: cannot mount a tmpfs here)"
fi

# Off a terminal, a progress line every 10 s of the command.
"$kvsim" explore --scenario page42 --budget 11s > /dev/null 2> progress.txt
grep -q "^kvsim explore: page42 \[safe\]: [0-9]* runs" progress.txt ||
  fail "no progress line in an 11 s search off a terminal: $(head -c 300 progress.txt)"

[[ $failures -eq 0 ]] && echo "cli_outputs_test: ok"
exit $((failures > 0))
