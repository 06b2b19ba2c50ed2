#!/usr/bin/env bash
# tests/tools/allocator_tuning_test.sh PROBE KVSIM
#
# kvsim restarts itself once with glibc's tcache enlarged (tools/kvsim/allocator_tuning.h):
# the probe shows that the restart happens, once, in the same process, and that a caller's own
# setting or KVSIM_ALLOCATOR_TUNING=off is respected; kvsim shows that the tuning changes no
# decision: the same runs give byte-identical traces with and without it.
set -uo pipefail
probe="$1"
kvsim="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/kvsim-alloc.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { sed -n "s/^$1 //p" "$work/probe.txt"; }

run_probe() {
  env -u KVSIM_ALLOCATOR_TUNING -u GLIBC_TUNABLES "$@" "$probe" > "$work/probe.txt" 2>&1 &
  local pid=$!
  wait "$pid" || fail "probe exited $? with $*"
  started_pid="$pid"
}

run_probe
if [[ "$(field possible)" == 1 ]]; then
  [[ "$(field in_effect)" == "glibc.malloc.tcache_count=4096" ]] ||
    fail "default start not tuned: $(cat "$work/probe.txt")"
  [[ "$(field tunables)" == "glibc.malloc.tcache_count=4096" ]] ||
    fail "default start: GLIBC_TUNABLES is '$(field tunables)'"
  [[ "$(field pid)" == "$started_pid" ]] ||
    fail "the restart was not an exec of the same process ($(field pid) vs $started_pid)"

  run_probe KVSIM_ALLOCATOR_TUNING=off
  [[ "$(field in_effect)" == "allocator defaults" && "$(field tunables)" == "-" ]] ||
    fail "KVSIM_ALLOCATOR_TUNING=off still tuned: $(cat "$work/probe.txt")"

  run_probe GLIBC_TUNABLES=glibc.malloc.tcache_count=3
  [[ "$(field in_effect)" == "glibc.malloc.tcache_count=3" &&
     "$(field tunables)" == "glibc.malloc.tcache_count=3" ]] ||
    fail "the caller's own tcache_count was overridden: $(cat "$work/probe.txt")"

  run_probe GLIBC_TUNABLES=glibc.malloc.mxfast=0
  [[ "$(field tunables)" == "glibc.malloc.mxfast=0:glibc.malloc.tcache_count=4096" ]] ||
    fail "the caller's other tunables were lost: $(cat "$work/probe.txt")"
else
  # A sanitizer build: malloc is not glibc's, nothing restarts and nothing is set.
  [[ "$(field in_effect)" == "allocator defaults" && "$(field tunables)" == "-" ]] ||
    fail "tuning applied where it cannot: $(cat "$work/probe.txt")"
fi

# Same decisions, same traces, whether or not kvsim restarted tuned: safe runs, runs with
# findings, the HiCache and the churn scenarios.
mkdir -p "$work/tuned" "$work/off"
for spec in "page42 safe" "page42 B1" "b2_early_ack B2" "hicache_local_pending safe" \
            "room_churn safe" "adversarial_network safe"; do
  read -r scenario variant <<< "$spec"
  for seed in 1 2 3 4 5; do
    name="$scenario.$variant.$seed.json"
    env -u GLIBC_TUNABLES -u KVSIM_ALLOCATOR_TUNING "$kvsim" run --scenario "$scenario" \
      --variant "$variant" --seed "$seed" --trace "$work/tuned/$name" > /dev/null 2>&1
    env -u GLIBC_TUNABLES KVSIM_ALLOCATOR_TUNING=off "$kvsim" run --scenario "$scenario" \
      --variant "$variant" --seed "$seed" --trace "$work/off/$name" > /dev/null 2>&1
    [[ -s "$work/tuned/$name" ]] || fail "$name: no trace written"
    cmp -s "$work/tuned/$name" "$work/off/$name" || fail "$name: traces differ with the tuning"
  done
done
exit $(( failures > 0 ))
