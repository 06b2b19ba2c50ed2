#!/usr/bin/env bash
# The purity checks must pass on core/ and sim/ and fire on fixtures that break every rule.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$repo_root/tools/check_layers.sh"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$check" || fail "core/ or sim/ is reported impure"

expect_fires() {
  local layer="$1" dir="$2"; shift 2
  local output rc
  output="$("$check" "$layer" "$dir" 2>&1)"
  rc=$?
  [[ $rc -eq 1 ]] || fail "expected exit 1 on $dir, got $rc"
  for why in "$@"; do
    grep -q "$why" <<< "$output" || fail "$layer rules: no violation reported for: $why"
  done
}
expect_fires core "$repo_root/tests/tools/impure_core" "includes the simulator" \
  "includes the real backend" "includes Boost.Fiber" "includes CUDA or NCCL" \
  "uses threads, clocks or randomness" "uses wall clocks, randomness or the environment" \
  "uses thread-local state"
expect_fires sim "$repo_root/tests/tools/impure_sim" "includes an upper layer" \
  "uses threads or randomness" "reads a wall clock" "uses wall clocks or randomness" \
  "uses thread-local state" "keys a container by pointer"

"$check" core /nonexistent-dir >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a missing directory must exit 2"
"$check" gpu "$repo_root/core" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "an unknown layer must exit 2"

if [[ $failures -gt 0 ]]; then exit 1; fi
echo "check_layers_test: ok"
