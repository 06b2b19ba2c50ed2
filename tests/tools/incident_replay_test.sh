#!/usr/bin/env bash
# examples/incidents/: a logged incident replays as logged (requests[i].pin). Every incident is
# red with its breaking variant and green with safe (explore --all); the overlap incident shows
# the damage: A's late write lands in page 5, which the log gave B (I1, and the page's history in
# the text timeline); the disjoint one puts B on pages A never had, and the same late write then
# lands only in A's own freed page.
set -uo pipefail
kvsim="$1"
incidents="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
contains() { [[ "$1" == *"$2"* ]] || fail "$3: expected '$2' in: ${1:0:600}"; }
lacks() { [[ "$1" != *"$2"* ]] || fail "$3: did not expect '$2' in: ${1:0:600}"; }

# Red with B1 and green with safe, each row as the incident file expects.
out="$("$kvsim" explore --catalogue "$incidents" --all --runs 200 2>&1)"
rc=$?
[[ $rc -eq 0 ]] || fail "explore --all exited $rc, expected 0: $out"
for row in "incident_overlap        B1      found    found       yes" \
           "incident_overlap        safe    clean    clean       yes" \
           "incident_disjoint       B1      found    found       yes" \
           "incident_disjoint       safe    clean    clean       yes"; do
  contains "$out" "$row" "explore --all"
done

# The damage: under B1, A's (room 7) stalled write lands in page 5 after the log gave it to B.
out="$("$kvsim" explore --catalogue "$incidents" --scenario incident_overlap --variant B1 \
         --checkers damage --runs 50 2>&1)"
rc=$?
[[ $rc -eq 0 ]] || fail "the overlap incident under B1 (damage) exited $rc, expected 0 (found): $out"
contains "$out" "I1: transfer 1 of room 7/gen 0 wrote destination page 5 on rank 1" "overlap, B1"
contains "$out" "allocated to room 9/gen 0" "overlap, B1"
"$kvsim" run --catalogue "$incidents" --scenario incident_overlap --variant B1 --seed 1 \
  --checkers damage --trace "$work/overlap.json" > /dev/null
"$kvsim" export "$work/overlap.json" --format text -o "$work/overlap.txt" > /dev/null ||
  fail "export of the overlap incident's trace"
timeline="$(cat "$work/overlap.txt" 2>/dev/null)"
contains "$timeline" "allocates rank 1 pages [3,4,5] to request 0 (room 7/gen 0)" "overlap timeline"
contains "$timeline" "allocates rank 1 pages [5,6] to request 1 (room 9/gen 0)" "overlap timeline"
contains "$timeline" "written by r0.transfer.1 (request 0, room 7/gen 0) from rank 0 page 2 while request 1 (room 9/gen 0) owns it" \
  "overlap timeline"
out="$("$kvsim" explore --catalogue "$incidents" --scenario incident_overlap --variant safe --runs 200 2>&1)"
rc=$?
[[ $rc -eq 0 ]] || fail "the overlap incident under safe exited $rc, expected 0 (clean): $out"

# The pin is exact: B on [6,7] is never written by A; A's late write meets its own freed page.
out="$("$kvsim" explore --catalogue "$incidents" --scenario incident_disjoint --variant B1 \
         --checkers damage --runs 50 2>&1)"
contains "$out" "I1: transfer 1 of room 7/gen 0 wrote destination page 5 on rank 1" "disjoint, B1"
contains "$out" "and is free" "disjoint, B1"
lacks "$out" "room 9/gen 0" "disjoint, B1"
"$kvsim" run --catalogue "$incidents" --scenario incident_disjoint --variant B1 --seed 1 \
  --checkers damage --trace "$work/disjoint.json" > /dev/null
"$kvsim" export "$work/disjoint.json" --format text -o "$work/disjoint.txt" > /dev/null
timeline="$(cat "$work/disjoint.txt" 2>/dev/null)"
contains "$timeline" "allocates rank 1 pages [6,7] to request 1 (room 9/gen 0)" "disjoint timeline"
lacks "$timeline" "while request 1 (room 9/gen 0) owns it" "disjoint timeline"

[[ $failures -eq 0 ]] && echo "incident_replay_test: ok"
exit $((failures > 0))
