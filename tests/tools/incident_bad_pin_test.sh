#!/usr/bin/env bash
# A bad pin in an incident file (requests[i].pin) is bad input: one 'kvsim ...' line on stderr
# naming the file, the scenario and the field, nothing on stdout, exit 2, before anything runs.
set -uo pipefail
kvsim="$1"
incidents="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
# The incident file with the first occurrence of a text (in incident_overlap, its first
# scenario) replaced.
bad() {
  local from="$1" to="$2"
  grep -qF -- "$from" "$incidents" || { echo "FAIL: no '$from' in $incidents"; failures=$((failures + 1)); }
  python3 - "$incidents" "$from" "$to" > "$work/bad.json" <<'PY'
import sys
text = open(sys.argv[1]).read()
sys.stdout.write(text.replace(sys.argv[2], sys.argv[3], 1))
PY
}
expect_bad_pin() {
  local wanted="$1" stdout stderr rc
  shift
  for command in "list --catalogue $work/bad.json" \
                 "explore --catalogue $work/bad.json --all --runs 1" \
                 "explore --catalogue $work/bad.json --scenario incident_overlap --runs 1"; do
    # shellcheck disable=SC2086
    stderr="$( { stdout="$("$kvsim" $command)"; } 2>&1 )"
    rc=$?
    # shellcheck disable=SC2086
    stdout="$("$kvsim" $command 2>/dev/null)"
    if [[ $rc -ne 2 || -n "$stdout" || $(wc -l <<< "$stderr") -ne 1 || "$stderr" != kvsim* ||
          "$stderr" != *"$work/bad.json: scenario 'incident_overlap': field '"*"$wanted"* ]]; then
      echo "FAIL: kvsim $command should exit 2 with one line containing '$wanted'," \
           "got $rc: ${stderr:0:400} / stdout: ${stdout:0:200}"
      failures=$((failures + 1))
    fi
  done
}

bad '"decode_pages": [3, 4, 5]' '"decode_pages": [3, 4, 8]'
expect_bad_pin "requests[0].pin.decode_pages[2]' must be a page of the pool, below topology.pages_per_rank = 8 (got 8)"
bad '"decode_pages": [5, 6]' '"decode_pages": [5]'
expect_bad_pin "requests[1].pin.decode_pages' lists 1 page(s), but the request has pages = 2"
bad '"pin": {"decode_pages": [5, 6], "submit_at_us": 30}' '"pin": {"decode_pages": [5, 6], "submit_at_us": 30, "abort_at_us": 45}'
expect_bad_pin "requests[1].pin.abort_at_us' is given but the request has no 'abort'"

[[ $failures -eq 0 ]] && echo "incident_bad_pin_test: ok"
exit $((failures > 0))
