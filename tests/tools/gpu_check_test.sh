#!/usr/bin/env bash
# tools/gpu_check.sh's CPU parts, without a GPU: its arguments, what it says where there is
# no GPU, and how it reads results into its table (stand-in binaries that answer as the real
# ones do on a GPU machine: tests/tools/gpu_check_fakes/).
#   gpu_check_test.sh KVSIM_REAL REPO_ROOT
set -uo pipefail
real_binary="$1"
repo="$2"
fakes="$repo/tests/tools/gpu_check_fakes"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check NAME EXPECTED_RC -- runs gpu_check with the rest; output in $work/NAME.{out,err}
check() {
  local name="$1" expected="$2"
  shift 2
  local rc=0
  "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  [[ $rc -eq $expected ]] || fail "$name: exit $rc, expected $expected; stderr: $(head -c 300 "$work/$name.err")"
}
gpu_check=("$repo/tools/gpu_check.sh")
# With the stand-ins: their nvidia-smi first on PATH, their binaries as the carried ones.
# faked [VAR=VALUE...] [gpu_check arguments...]
faked() {
  local vars=()
  while [[ $# -gt 0 && "$1" == *=* ]]; do vars+=("$1"); shift; done
  env PATH="$fakes:$PATH" KVSIM_BIN_DIR="$fakes" "${vars[@]}" "${gpu_check[@]}" "$@"
}
one_line() {  # NAME PATTERN: exactly one stderr line, matching, and nothing on stdout
  local n; n="$(grep -c . "$work/$1.err")"
  [[ "$n" == 1 ]] || fail "$1: $n lines on stderr: $(cat "$work/$1.err")"
  grep -q -- "$2" "$work/$1.err" || fail "$1: stderr does not say '$2': $(cat "$work/$1.err")"
  [[ ! -s "$work/$1.out" ]] || fail "$1: printed on stdout: $(head -c 200 "$work/$1.out")"
}
table_last() {  # NAME SUMMARY: the table ends the output, its summary line last
  local out="$work/$1.out"
  local header; header="$(grep -n '^check  *result  *detail$' "$out" | tail -1 | cut -d: -f1)"
  [[ -n "$header" ]] || { fail "$1: no table"; return; }
  [[ "$(tail -1 "$out")" == "$2" ]] || fail "$1: last line '$(tail -1 "$out")', expected '$2'"
  if tail -n +"$((header + 1))" "$out" | head -n -1 | grep -v -E '^[^ ].* (PASS|FAIL|MISS|SKIP) +' >/dev/null; then
    fail "$1: something other than rows after the table's header"
  fi
}
row_of() { grep -E "^$2 +(PASS|FAIL|MISS|SKIP) " "$work/$1.out" | tail -1; }

# --- arguments ---------------------------------------------------------------------------------
check bad_argument 2 "${gpu_check[@]}" --bogus
one_line bad_argument "gpu_check: unknown argument '--bogus'"
check build_dir_without_value 2 "${gpu_check[@]}" --build-dir
one_line build_dir_without_value "gpu_check: --build-dir needs a value"
check bad_budget 2 "${gpu_check[@]}" --budget-s 8m
one_line bad_budget "gpu_check: --budget-s takes whole seconds"
check help 0 "${gpu_check[@]}" --help
grep -q -- "--budget-s SECONDS" "$work/help.out" || fail "help: no usage line"
grep -q "^set -e" "$work/help.out" && fail "help: prints the script beyond its comment"
check no_binaries 2 env KVSIM_BIN_DIR="$work/empty" "${gpu_check[@]}"
one_line no_binaries "gpu_check: neither $work/empty/kvsim_real nor"

# --- no GPU -------------------------------------------------------------------------------------
check fake_no_gpu 2 faked FAKE_MODE=nogpu
grep -q "gpu_check: no GPU here (kvsim real: no CUDA device found (cudaGetDeviceCount: cudaErrorNoDevice" \
  "$work/fake_no_gpu.err" || fail "fake_no_gpu: $(cat "$work/fake_no_gpu.err")"
[[ "$(grep -c . "$work/fake_no_gpu.err")" == 1 ]] || fail "fake_no_gpu: more than one line on stderr"
grep -q "^check " "$work/fake_no_gpu.out" && fail "fake_no_gpu: printed a table"
# A kvsim real with --data-plane runs on the host without a GPU: the check asks for the GPU.
check fake_no_gpu_has_host_plane 2 faked FAKE_MODE=nogpu FAKE_DATA_PLANE=1
grep -q "gpu_check: no GPU here" "$work/fake_no_gpu_has_host_plane.err" ||
  fail "fake_no_gpu_has_host_plane: $(cat "$work/fake_no_gpu_has_host_plane.err")"
# The real binary, where this machine has no GPU (on a GPU machine this part has nothing to say).
cuda_args=()
"$real_binary" --help 2>&1 | grep -q -- "--data-plane" && cuda_args=(--data-plane cuda)
if "$real_binary" --scenario page42 --json "${cuda_args[@]}" 2>&1 >/dev/null | grep -q "no CUDA device found"; then
  mkdir -p "$work/real_bin"
  ln -s "$real_binary" "$work/real_bin/kvsim_real"
  check real_no_gpu 2 env KVSIM_BIN_DIR="$work/real_bin" "${gpu_check[@]}"
  grep -q "^gpu_check: no GPU here (kvsim real: no CUDA device found" "$work/real_no_gpu.err" ||
    fail "real_no_gpu: $(cat "$work/real_no_gpu.err")"
  # Nothing built on a machine with no GPU device at all.
  if ! compgen -G "/dev/nvidia[0-9]*" >/dev/null && ! command -v nvidia-smi >/dev/null; then
    check no_gpu_no_build 2 "${gpu_check[@]}" --build-dir "$work/never_built"
    one_line no_gpu_no_build "gpu_check: no GPU here (no /dev/nvidia\* device, no nvidia-smi): nothing to check"
    [[ -e "$work/never_built" ]] && fail "no_gpu_no_build: configured a build anyway"
  fi
fi

# --- a GPU machine, every check green -----------------------------------------------------------
check green 0 faked OUT="$work/out_green" FAKE_CALLS="$work/green.calls"
table_last green "all checks passed"
row_of green "page42 B1" | grep -q "PASS  *found I3,I1,I7 .*timing-dependent; I7: found bytes written for room 42/gen 0" ||
  fail "green: page42 B1 row: $(row_of green 'page42 B1')"
row_of green "page42 safe" | grep -q "PASS  *no finding" || fail "green: page42 safe row"
row_of green "hicache_local_active H2" | grep -q "PASS  *found I6" || fail "green: HiCache red row"
row_of green "hicache_local_active safe" | grep -q "PASS" || fail "green: HiCache green row"
row_of green "nccl check \(1 process\)" | grep -q "PASS.*MAX 0, barrier passed: ok" || fail "green: nccl row"
row_of green "bench 64 KiB pages" | grep -q "PASS  *core/raw 1.012 (1.2% bookkeeping, target < 2%)" ||
  fail "green: bench row: $(row_of green 'bench 64 KiB pages')"
row_of green "host data plane" | grep -q "SKIP" || fail "green: no --data-plane, yet no SKIP row"
grep -q -- "--variant B1" "$work/green.calls" || fail "green: page42 B1 never run"
for f in table.txt table.tsv real_page42_B1.json bench.txt nccl_check.txt; do
  [[ -s "$work/out_green/$f" ]] || fail "green: \$OUT/$f missing"
done
grep -q "^all checks passed$" "$work/out_green/table.txt" || fail "green: \$OUT/table.txt"
[[ "$(grep -c . "$work/out_green/table.tsv")" == 9 ]] || fail "green: table.tsv rows: $(cat "$work/out_green/table.tsv")"

# --- what turns a row red -------------------------------------------------------------------------
check no_canary 1 faked FAKE_MODE=nocanary
table_last no_canary "1 check(s) failed"
row_of no_canary "page42 B1" | grep -q "FAIL.*no page read back holding another request's bytes" ||
  fail "no_canary: $(row_of no_canary 'page42 B1')"
check wrong_invariant 1 faked FAKE_MODE=wrong
row_of wrong_invariant "page42 B1" | grep -q "FAIL  *found I2, the simulator reports I3" ||
  fail "wrong_invariant: $(row_of wrong_invariant 'page42 B1')"
check bench_missed 0 faked FAKE_PCT=3.5 FAKE_RATIO=1.035 FAKE_MET="NOT met"
row_of bench_missed "bench 64 KiB pages" | grep -q "MISS  *core/raw 1.035 (3.5% bookkeeping" ||
  fail "bench_missed: $(row_of bench_missed 'bench 64 KiB pages')"
check ran_on_the_host 1 faked FAKE_MODE=hostonly FAKE_DATA_PLANE=1
row_of ran_on_the_host "page42 safe" | grep -q "FAIL  *ran on the host data plane, not cuda" ||
  fail "ran_on_the_host: $(row_of ran_on_the_host 'page42 safe')"
check no_budget 1 faked --budget-s 4
row_of no_budget "bench 64 KiB pages" | grep -q "FAIL  *not run: time budget spent" ||
  fail "no_budget: $(row_of no_budget 'bench 64 KiB pages')"

# --- several GPUs: one NCCL process per GPU, torchrun's variables, one run key -------------------
check two_gpus 0 faked FAKE_GPUS=2 FAKE_CALLS="$work/two.calls"
row_of two_gpus "nccl check \(2 processes\)" | grep -q "PASS.*MAX 1, barrier passed: ok" ||
  fail "two_gpus: $(row_of two_gpus 'nccl check \(2 processes\)')"
[[ "$(grep -c -- "--nccl-check RANK=[01]$" "$work/two.calls")" == 2 ]] ||
  fail "two_gpus: not one --nccl-check per rank: $(grep nccl "$work/two.calls")"
check two_gpus_one_fails 1 faked FAKE_GPUS=2 FAKE_NCCL_FAIL_RANK=1
row_of two_gpus_one_fails "nccl check \(2 processes\)" | grep -q "FAIL  *1 of 2 ranks failed" ||
  fail "two_gpus_one_fails: $(row_of two_gpus_one_fails 'nccl check \(2 processes\)')"

# --- the host data plane, where kvsim real has one -------------------------------------------------
check host_plane 0 faked FAKE_DATA_PLANE=1 FAKE_CALLS="$work/host.calls"
table_last host_plane "all checks passed"
row_of host_plane "host, 2 processes: page42 B1" | grep -q "PASS  *found I3,I1,I7" ||
  fail "host_plane: no two-process row for page42 B1"
row_of host_plane "host, 2 processes: page42 safe" | grep -q "PASS  *no finding" ||
  fail "host_plane: no two-process row for page42 safe"
row_of host_plane "host: hicache_local_active H2" | grep -q "PASS  *found I6" ||
  fail "host_plane: no host HiCache row"
grep -q -- "--scenario page42 --variant B1 .*--data-plane host --ranks 2" "$work/host.calls" ||
  fail "host_plane: page42 never ran as two processes"
grep -q -- "--scenario page42 --variant B1 .*--data-plane cuda" "$work/host.calls" ||
  fail "host_plane: the GPU rows did not ask for the GPU"

# --- every rank a process: a HiCache case's group on the host, page42 on the GPU ------------------
check processes 0 faked FAKE_DATA_PLANE=2 FAKE_CALLS="$work/processes.calls"
table_last processes "all checks passed"
row_of processes "cuda, 2 processes: page42 B1" | grep -q "PASS  *found I3,I1,I7" ||
  fail "processes: no GPU two-process row for page42 B1"
row_of processes "cuda, 2 processes: page42 safe" | grep -q "PASS  *no finding" ||
  fail "processes: no GPU two-process row for page42 safe"
row_of processes "host, 2 processes: hicache_local_active H2" | grep -q "PASS  *found I6" ||
  fail "processes: no HiCache row with its ranks as processes"
grep -q -- "--scenario page42 --variant B1 .*--data-plane cuda --ranks 2" "$work/processes.calls" ||
  fail "processes: page42 never ran as two processes on the GPU"
row_of host_plane "cuda, 2 processes" | grep -q "SKIP" ||
  fail "host_plane: a kvsim real without cuda processes, yet no SKIP row"

if [[ $failures -eq 0 ]]; then echo "gpu_check_test: all cases passed"; fi
[[ $failures -eq 0 ]]
