#!/usr/bin/env bash
# One `kvsim real --data-plane host` run as CI sees it (no GPU): the command's exit status
# and the finding line it must print (or "no finding").
#   host_plane_run_test.sh KVSIM_REAL EXPECTED_EXIT EXPECTED_LINE_START ARGS...
# e.g. ... 1 "finding: I3: rank 1 freed page " --scenario page42 --variant B1 --ranks 2
set -u
bin=$1 expected_exit=$2 expected=$3
shift 3
out=$("$bin" --data-plane host "$@" 2>&1)
status=$?
echo "$out"
if [[ $status -ne $expected_exit ]]; then
  echo "FAIL: exit $status, expected $expected_exit"
  exit 1
fi
if ! grep -qF -- "$expected" <<<"$out"; then
  echo "FAIL: no line with '$expected'"
  exit 1
fi
echo "ok: exit $status, '$expected'"
