#!/usr/bin/env bash
# The HiCache cases as processes: every HiCache scenario the real backend scripts (kvsim
# real --list), red with its breaking variant and green with safe, run with each rank of its
# attention group a process of its own (--data-plane host --ranks N: the collectives over the
# authenticated, sealed loopback TCP control plane), against the same run with its ranks as
# threads of one process (--ranks 1).
#   prefetch_processes_test.sh KVSIM_REAL CATALOGUE
# Holds when, for each: both runs exit alike (1 red, 0 green), their finding lines are the
# same (sorted: two ranks that find at once may be reported in either order), red has one;
# the processes' report names a process for every rank, each a different one, and says the
# collectives went over TCP; and the threads' report names none.
set -u
real=$1 catalogue=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The finding lines of a report, without "finding: "/"also: ", sorted.
findings_of() { grep -E '^(finding|also): ' <<<"$1" | sed -E 's/^(finding|also): //' | sort; }

attention_group() {
  python3 - "$catalogue" "$1" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    if s["name"] == sys.argv[2]:
        print(s["topology"]["attention_group"])
PY
}

one() {  # SCENARIO VARIANT EXPECTED_EXIT
  local scenario=$1 variant=$2 expected=$3 ranks threads processes status_t status_p
  ranks=$(attention_group "$scenario")
  threads=$("$real" --data-plane host --scenario "$scenario" --variant "$variant" \
    --catalogue "$catalogue" --ranks 1 2>&1)
  status_t=$?
  processes=$("$real" --data-plane host --scenario "$scenario" --variant "$variant" \
    --catalogue "$catalogue" --ranks "$ranks" 2>&1)
  status_p=$?
  echo "--- $scenario $variant, $ranks rank processes:"
  echo "$processes"
  local case="$scenario $variant"
  [[ $status_t -eq $expected ]] || fail "$case: ranks as threads exit $status_t, expected $expected"
  [[ $status_p -eq $expected ]] || fail "$case: ranks as processes exit $status_p, expected $expected"
  if [[ "$(findings_of "$processes")" != "$(findings_of "$threads")" ]]; then
    fail "$case: the processes found other lines than the threads:"
    diff <(findings_of "$threads") <(findings_of "$processes") | sed 's/^/    /'
  fi
  if [[ $expected -eq 1 && -z "$(findings_of "$processes")" ]]; then
    fail "$case: red, but no finding"
  fi
  local pids
  pids=$(grep -oE '^  rank [0-9]+ \([a-z]+\) in process [0-9]+' <<<"$processes" | awk '{print $NF}' | sort -u | wc -l)
  [[ $pids -eq $ranks ]] || fail "$case: $pids different rank processes named, not $ranks"
  grep -q '^  collectives: every entry sent to every peer over loopback TCP' <<<"$processes" ||
    fail "$case: the report does not say the collectives went over TCP"
  ! grep -q ' in process ' <<<"$threads" || fail "$case: the threads' run names a process"
}

listed=$("$real" --list --catalogue "$catalogue") || { echo "FAIL: kvsim real --list"; exit 1; }
cases=0
while read -r scenario rest; do
  [[ $rest == *"(prefetch; breaks with "* ]] || continue
  breaking=$(sed -E 's/.*breaks with ([A-Z0-9]+),.*/\1/' <<<"$rest")
  one "$scenario" "$breaking" 1
  one "$scenario" safe 0
  cases=$((cases + 1))
done <<<"$listed"
[[ $cases -gt 0 ]] || fail "no HiCache scenario in kvsim real --list"
echo "$cases HiCache scenarios, red and green, $failures failure(s)"
[[ $failures -eq 0 ]]
