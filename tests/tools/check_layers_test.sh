#!/usr/bin/env bash
# The purity check must pass on core/ and fire on a fixture that breaks every rule.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$repo_root/tools/check_layers.sh"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$check" "$repo_root/core" >/dev/null || fail "core/ is reported impure"

output="$("$check" "$repo_root/tests/tools/impure_core" 2>&1)"
rc=$?
[[ $rc -eq 1 ]] || fail "expected exit 1 on the impure fixture, got $rc"
for why in "includes the simulator" "includes the real backend" "includes Boost.Fiber" \
           "includes CUDA or NCCL" "uses threads, clocks or randomness" \
           "uses wall clocks, randomness or the environment" "uses thread-local state"; do
  grep -q "$why" <<< "$output" || fail "no violation reported for: $why"
done

"$check" /nonexistent-dir >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a missing directory must exit 2"

if [[ $failures -gt 0 ]]; then exit 1; fi
echo "check_layers_test: ok"
