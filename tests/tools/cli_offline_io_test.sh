#!/usr/bin/env bash
# tests/tools/cli_offline_io_test.sh KVSIM [sanitized]
#
# What kvsim reads and writes offline holds against hostile or unlucky files:
#  - an input over its kind's size cap is refused unread, in one line naming the cap;
#  - short of memory, a run ends in "out of memory" and exit 2, never in a signal;
#  - a write through a symlink replaces the link's target atomically (a full disk leaves the
#    old target whole); a link planted inside explore --out DIR is refused, not followed;
#  - a value from an input (a variant name, a finding's message, a path, a merged row's name)
#    cannot break a line, reach the terminal as an escape, or run for megabytes;
#  - a key given twice is refused in traces and merge inputs, as in catalogues;
#  - a search worker that dies gives exit 4 and its own line, and the reports still appear.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/sanitizer_notes.sh"
kvsim="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
sanitized="${2:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvsim-offline-io.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
esc=$'\x1b'

# expect_line NAME CODE PATTERN ARGS...: exit CODE, exactly one line on stderr matching
# PATTERN (grep -E), no escape byte in anything printed.
expect_line() {
  local name="$1" code="$2" pattern="$3"
  shift 3
  "$kvsim" "$@" > out.txt 2> err.txt
  local got=$?
  without_sanitizer_notes err.txt
  [[ $got -eq $code ]] || fail "$name: exit $got, expected $code ($(head -c 300 err.txt))"
  [[ $(wc -l < err.txt) -eq 1 ]] || fail "$name: expected one error line, got $(wc -l < err.txt): $(head -c 300 err.txt)"
  grep -Eq -- "$pattern" err.txt || fail "$name: the line does not say '$pattern': $(head -c 300 err.txt)"
  ! grep -q "$esc" out.txt err.txt || fail "$name: an escape byte reached the terminal"
  [[ $(wc -c < err.txt) -le 1100 ]] || fail "$name: the error line is $(wc -c < err.txt) bytes long"
}

# --- size caps: checked on the open file's size, nothing read --------------------------------
truncate -s $((64 * 1024 * 1024 + 1)) big_trace.json
expect_line "replay of a trace over the cap" 2 \
  "big_trace.json: 67108865 bytes is over the 67108864-byte cap for a trace" replay big_trace.json
truncate -s $((8 * 1024 * 1024 + 1)) big_catalogue.json
expect_line "a catalogue over the cap" 2 \
  "big_catalogue.json: 8388609 bytes is over the 8388608-byte cap for a catalogue" \
  list --catalogue big_catalogue.json
truncate -s $((16 * 1024 * 1024 + 1)) big_shard.json
expect_line "a merge input over the cap" 2 \
  "big_shard.json: 16777217 bytes is over the 16777216-byte cap for a merge input" merge big_shard.json
# A pipe has no size: it is read up to the cap + 1 byte, then refused.
expect_line "a catalogue from a pipe over the cap" 2 \
  "more than 8388608 bytes, over the 8388608-byte cap for a catalogue" \
  list --catalogue <(head -c $((9 * 1024 * 1024)) /dev/zero)

# --- out of memory: a line and exit 2, not a signal ---------------------------------------------
# Under a sanitizer the address space is the sanitizer's (a ulimit -v stops it from starting).
if [[ -z "$sanitized" ]]; then
  # A world within every cap (64 + 64 ranks, 256 MiB of pages), in an address space that
  # holds kvsim but not that world's books and stacks.
  python3 - "$here/../../scenarios/catalogue.json" <<'PY'
import json, sys
catalogue = sys.argv[1]
d = json.load(open(catalogue))
s = [x for x in d["scenarios"] if x["name"] == "page42"][0]
s["name"] = "wide"
s["topology"].update({"prefill_ranks": 64, "decode_ranks": 64, "pages_per_rank": 512, "page_bytes": 4096})
d["scenarios"] = [s]
json.dump(d, open("wide.json", "w"))
PY
  (ulimit -v 400000 && exec env KVSIM_ALLOCATOR_TUNING=off "$kvsim" run --catalogue wide.json --scenario wide --seed 1) \
    > out.txt 2> err.txt
  code=$?
  [[ $code -eq 2 ]] || fail "a world short of memory: exit $code, expected 2: $(head -c 300 err.txt)"
  [[ "$(cat err.txt)" == "kvsim run: out of memory" ]] ||
    fail "a world short of memory: expected 'kvsim run: out of memory', got: $(head -c 300 err.txt)"
  # Limits where the world starts (every actor's stack is reserved) but runs out later, when
  # a prefill rank spawns a transfer executor (rN.transfer.K) from inside its fiber, or when
  # the log or a book grows. Measured on x86-64 Release: the start fails below ~550,000 KiB,
  # a spawn fails from there to ~1,550,000, and the run ends by itself (a livelock finding,
  # 1.7 s) above ~1,650,000. These died of SIGSEGV in Boost's fiber switch (teardown resumed
  # the actor whose spawn failed: it had no fiber) or of std::terminate (an exception left a
  # fiber).
  for limit in 800000 1200000; do
    (ulimit -v "$limit" && exec env KVSIM_ALLOCATOR_TUNING=off "$kvsim" run --catalogue wide.json --scenario wide --seed 1) \
      > out.txt 2> err.txt
    code=$?
    [[ $code -eq 2 ]] ||
      fail "a world out of memory mid-run (ulimit -v $limit): exit $code, expected 2: $(head -c 300 err.txt)"
    [[ "$(cat err.txt)" == "kvsim run: out of memory" ]] ||
      fail "a world out of memory mid-run (ulimit -v $limit): expected 'kvsim run: out of memory', got: $(head -c 300 err.txt)"
  done
fi

# --- a trace to work with ------------------------------------------------------------------------
"$kvsim" run --scenario page42 --variant B1 --seed 3 --trace t.json > /dev/null
[[ -s t.json ]] || fail "run --trace wrote no trace"

# --- writes through a symlink: the target replaced whole, or left as it was -----------------------
mkdir elsewhere
printf 'old trace, must survive\n' > elsewhere/target.json
ln -s elsewhere/target.json link.json
# A full disk, as a file size limit makes one (SIGXFSZ ignored: write then fails with EFBIG).
(ulimit -f 4 && trap '' XFSZ && exec "$kvsim" run --scenario page42 --variant B1 --seed 3 --trace link.json) \
  > /dev/null 2> err.txt
code=$?
[[ $code -eq 2 ]] || fail "--trace through a link on a full disk: exit $code, expected 2"
[[ "$(cat elsewhere/target.json)" == "old trace, must survive" ]] ||
  fail "--trace through a link on a full disk cut the old target to $(wc -c < elsewhere/target.json) bytes"
[[ -L link.json ]] || fail "--trace through a link replaced the link"
ls elsewhere | grep -q '\.tmp$' && fail "a temporary file remains after the failed write"
"$kvsim" run --scenario page42 --variant B1 --seed 3 --trace link.json > /dev/null
[[ -L link.json ]] || fail "--trace through a link replaced the link"
cmp -s t.json elsewhere/target.json || fail "--trace through a link: the target is not the trace"

# A link planted inside --out DIR, where kvsim names the files: refused, never followed.
"$kvsim" explore --scenario page42 --variant B1 --runs 3 --out found > /dev/null 2>&1
planted=$(ls found | head -n 1)
[[ -n "$planted" ]] || fail "explore --out wrote no trace to plant a link over"
if [[ -n "$planted" ]]; then
  printf 'victim\n' > victim.txt
  rm -rf planted && mkdir planted && ln -s ../victim.txt "planted/$planted"
  expect_line "a link planted in --out" 2 "symbolic link" explore --scenario page42 --variant B1 --runs 3 --out planted
  [[ "$(cat victim.txt)" == "victim" ]] || fail "explore --out wrote through a planted link"
  [[ -L "planted/$planted" ]] || fail "explore --out replaced the planted link"
fi

# --- one sanitiser for every value echoed ---------------------------------------------------------
# edit FILE PYTHON: rewrites the trace FILE's JSON with a Python statement on `d`.
edit() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
open(sys.argv[1], "w").write(json.dumps(d))
PY
}
cp t.json variant.json && edit variant.json 'd["variant"] = "B1\n\x1b[2J evil"'
expect_line "a variant name with a newline and ESC" 2 "unknown core variant 'B1\\\\n\\\\x1b\\[2J evil'" replay variant.json
cp t.json faked.json && edit faked.json 'd["finding"]["message"] = "fake\nthe run came out as recorded\n\x1b[32m"; d["strategy"] = "random\nthe run came out as recorded"'
"$kvsim" replay faked.json > out.txt 2> err.txt
grep -qx "the run came out as recorded" out.txt && fail "a trace's message faked a 'came out as recorded' line"
grep -q "$esc" out.txt && fail "a trace's message reached the terminal as an escape"
[[ $(wc -l < out.txt) -eq 4 ]] || fail "replay of a trace with a multi-line message printed $(wc -l < out.txt) lines"
cp t.json huge_number.json && python3 - huge_number.json <<'PY'
import sys
text = open(sys.argv[1]).read().replace('"steps": ', '"steps": ' + "9" * 5_000_000 + ", \"x\": ", 1)
open(sys.argv[1], "w").write(text)
PY
expect_line "a 5 MB number" 2 "huge_number.json: " replay huge_number.json
expect_line "an output path with a newline" 2 "no/such\\\\ndir" run --scenario page42 --trace "$work/no/such"$'\n'"dir/t.json"

# A merged row's names come from a file: the table shows them escaped.
"$kvsim" explore --scenario page42 --runs 3 --json shard.json > /dev/null 2>&1
python3 - shard.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
rows[0]["scenario"] = "page42\n\x1b[31mred\nthird line"
open(sys.argv[1], "w").write(json.dumps(rows))
PY
"$kvsim" merge shard.json > out.txt 2> err.txt
grep -q "$esc" out.txt err.txt && fail "merge printed a name's escape byte"
grep -q "^third line" out.txt err.txt && fail "merge printed a name's newline"

# --- duplicate keys ---------------------------------------------------------------------------------
python3 - t.json dup.json <<'PY'
import sys
text = open(sys.argv[1]).read().replace('"seed": ', '"seed": "7", "seed": ', 1)
open(sys.argv[2], "w").write(text)
PY
expect_line "a trace with a key twice" 2 "dup.json: field 'seed' appears twice" replay dup.json
"$kvsim" explore --scenario page42 --runs 3 --json shard.json > /dev/null 2>&1
python3 - shard.json <<'PY'
import sys
text = open(sys.argv[1]).read().replace('"runs": ', '"runs": 1, "runs": ', 1)
open(sys.argv[1], "w").write(text)
PY
expect_line "a merge input with a key twice" 2 "shard.json: field '\\[0\\].runs' appears twice" merge shard.json

# --- a search worker that dies -------------------------------------------------------------------
set -m  # the explore and its workers in a process group of their own
"$kvsim" explore --scenario page42 --runs 100000000 --jobs 2 --json died.json --junit died.xml \
  > table.txt 2> err.txt &
pid=$!
worker=""
for _ in $(seq 1 200); do
  worker=$(pgrep -P "$pid" | head -n 1)
  [[ -n "$worker" ]] && break
  sleep 0.05
done
sleep 0.5
[[ -n "$worker" ]] && kill -KILL "$worker"
wait "$pid"
code=$?
set +m
without_sanitizer_notes err.txt
[[ $code -eq 4 ]] || fail "a worker killed: exit $code, expected 4: $(head -c 300 err.txt)"
grep -Eq "^kvsim explore: search worker [01] of page42 \[safe\] \(pid $worker\) was killed by signal 9" err.txt ||
  fail "a worker killed: no line naming it: $(head -c 300 err.txt)"
grep -q "a worker died" table.txt || fail "a worker killed: the table does not say so"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r and r[0]["interrupted"] and r[0]["runs"] > 0 else 1)' died.json ||
  fail "a worker killed: no JSON row of what ran"
grep -q "<testsuite " died.xml || fail "a worker killed: no JUnit"

[[ $failures -eq 0 ]] && echo "cli_offline_io_test: ok"
exit $((failures > 0))
