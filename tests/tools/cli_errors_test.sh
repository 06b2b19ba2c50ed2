#!/usr/bin/env bash
# A wrong command or flag: exactly one error line on stderr, nothing on stdout, exit 2.
set -uo pipefail
kvsim="$1"
failures=0
expect_usage_error() {
  local stdout stderr rc
  stderr="$( { stdout="$("$kvsim" "$@")"; } 2>&1 )"
  rc=$?
  stdout="$("$kvsim" "$@" 2>/dev/null)"
  if [[ $rc -ne 2 ]]; then echo "FAIL: kvsim $* exited $rc, expected 2"; failures=$((failures + 1)); fi
  if [[ -n "$stdout" ]]; then echo "FAIL: kvsim $* printed to stdout"; failures=$((failures + 1)); fi
  if [[ $(wc -l <<< "$stderr") -ne 1 || "$stderr" != kvsim:* ]]; then
    echo "FAIL: kvsim $* should print one 'kvsim: ...' line, got: $stderr"
    failures=$((failures + 1))
  fi
}
expect_usage_error frobnicate
expect_usage_error
expect_usage_error demo extra
expect_usage_error --no-such-flag
[[ $failures -eq 0 ]] && echo "cli_errors_test: ok"
exit $((failures > 0))
