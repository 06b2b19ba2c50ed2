#!/usr/bin/env bash
# The real backend on a GPU machine, in one go (no network needed): builds what it needs
# unless the binaries are there, runs every scenario the real backend scripts red (its
# breaking variant: a finding expected) and green (safe: none expected) on the device(s),
# the NCCL check, the gpu-labelled tests, and the copy benchmark (page copies through the
# core against raw cudaMemcpyAsync of the same pages). Prints a short table last.
#
#   tools/gpu_check.sh [--build-dir DIR] [--no-build]
#
# Binaries come from DIR/bin (default build/, the default preset): kvsim_real, or else
# `kvsim real` when the kvsim command was built with the real backend. KVSIM_BIN_DIR points at
# binaries carried from another machine instead (then nothing is built). With OUT set, every
# log, JSON result and the table are also written under "$OUT". Meant to finish within 8
# minutes; every step has its own time limit.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

build_dir=build
build=auto
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) [[ $# -ge 2 ]] || { echo "gpu_check: --build-dir needs a value" >&2; exit 2; }
                 build_dir="$2"; shift 2 ;;
    --no-build) build=no; shift ;;
    -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (--build-dir DIR, --no-build)" >&2; exit 2 ;;
  esac
done

started=$SECONDS
out_dir="${OUT:-}"
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir"
  log_dir="$out_dir"
else
  log_dir="$(mktemp -d)"
  trap 'rm -rf "$log_dir"' EXIT
fi
rows=()      # "check|result|detail" for the final table
failures=0

say() { echo "gpu_check: $*"; }
row() {  # check, result (PASS, FAIL, or MISS: a benchmark target missed, not a failure), detail
  rows+=("$1|$2|$3")
  if [[ "$2" == FAIL ]]; then failures=$((failures + 1)); fi
}

# --- binaries --------------------------------------------------------------------------------
bin_dir="${KVSIM_BIN_DIR:-$build_dir/bin}"
targets=(kvsim_real_cli kvsim_real_tests kvsim_real_gpu_tests kvsim_real_bench)
if [[ -n "${KVSIM_BIN_DIR:-}" ]]; then
  build=no
elif [[ "$build" == auto && -x "$bin_dir/kvsim_real" && -x "$bin_dir/kvsim_real_gpu_tests" &&
        -x "$bin_dir/kvsim_real_bench" ]]; then
  build=no
fi
if [[ "$build" != no ]]; then
  say "building ${targets[*]} kvsim in $build_dir ($(nproc) cores)"
  t0=$SECONDS
  if [[ "$build_dir" == build ]]; then
    cmake --preset default >"$log_dir/configure.log" 2>&1 || { tail -20 "$log_dir/configure.log"; exit 1; }
  else
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$log_dir/configure.log" 2>&1 ||
      { tail -20 "$log_dir/configure.log"; exit 1; }
  fi
  if ! grep -q "kvsim: real backend: CUDA" "$log_dir/configure.log"; then
    grep "kvsim: real backend" "$log_dir/configure.log" || true
    say "the real backend was not configured (see above)"
    exit 1
  fi
  timeout 420 cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]}" \
    >"$log_dir/build.log" 2>&1 || { tail -30 "$log_dir/build.log"; say "build failed"; exit 1; }
  # The kvsim command may carry `kvsim real` too; it is optional here.
  timeout 240 cmake --build "$build_dir" --parallel "$(nproc)" --target kvsim \
    >>"$log_dir/build.log" 2>&1 || say "kvsim (the CLI) did not build; using kvsim_real"
  row build PASS "$((SECONDS - t0)) s"
fi

real_cmd=()
if [[ -x "$bin_dir/kvsim_real" ]]; then
  real_cmd=("$bin_dir/kvsim_real")
elif [[ -x "$bin_dir/kvsim" ]] && "$bin_dir/kvsim" real --help >/dev/null 2>&1; then
  real_cmd=("$bin_dir/kvsim" real)
else
  say "neither $bin_dir/kvsim_real nor 'kvsim real' is available"
  exit 1
fi
say "using ${real_cmd[*]}"
catalogue="$repo_root/scenarios/catalogue.json"

# --- is there a GPU at all? ----------------------------------------------------------------------
probe_rc=0
"${real_cmd[@]}" --scenario page42 --variant safe --json --catalogue "$catalogue" \
  >"$log_dir/probe.json" 2>"$log_dir/probe.err" || probe_rc=$?
if [[ $probe_rc -eq 2 ]] && grep -q "no CUDA device found" "$log_dir/probe.err"; then
  cat "$log_dir/probe.err"
  say "no GPU here: nothing to check"
  exit 2
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader \
    >"$log_dir/nvidia-smi.txt" 2>&1 || true
fi

# --- scenarios, red and green ------------------------------------------------------------------
# One line per scripted scenario: "NAME  (KIND; breaks with VARIANT, simulator reports INV)".
mapfile -t scripted < <("${real_cmd[@]}" --list --catalogue "$catalogue")
for line in "${scripted[@]}"; do
  name="${line%%  *}"
  breaking="$(sed -n 's/.*breaks with \([^,]*\),.*/\1/p' <<<"$line")"
  for variant in "$breaking" safe; do
    json="$log_dir/real_${name}_${variant}.json"
    rc=0
    timeout 90 "${real_cmd[@]}" --scenario "$name" --variant "$variant" --json \
      --catalogue "$catalogue" >"$json" 2>"$json.err" || rc=$?
    invariant="$(sed -n 's/.*"finding":{"invariant":"\([^"]*\)".*/\1/p' "$json")"
    peers="$(sed -n 's/.*"simulated_peers":\(true\|false\).*/\1/p' "$json")"
    devices="$(sed -n 's/.*"devices":\([0-9]*\).*/\1/p' "$json")"
    where="${devices:-?} dev$([[ "$peers" == true ]] && echo ", peers simulated")"
    if [[ "$variant" == safe ]]; then
      if [[ $rc -eq 0 ]] && grep -q '"finding":null' "$json"; then
        row "$name safe" PASS "no finding ($where)"
      else
        row "$name safe" FAIL "rc $rc ${invariant:+finding $invariant }$(head -c 200 "$json.err")"
      fi
    else
      if [[ $rc -eq 1 && -n "$invariant" ]]; then
        row "$name $variant" PASS "finding $invariant ($where)"
      else
        row "$name $variant" FAIL "rc $rc, expected a finding $(head -c 200 "$json.err")"
      fi
    fi
  done
done

# --- NCCL through the launcher path (one process: WORLD_SIZE unset) ---------------------------
rc=0
timeout 60 "${real_cmd[@]}" --nccl-check >"$log_dir/nccl_check.txt" 2>&1 || rc=$?
if [[ $rc -eq 0 ]]; then
  row "nccl check" PASS "$(sed -n 's/.*: \(all_reduce.*\)/\1/p' "$log_dir/nccl_check.txt" | head -c 80)"
else
  row "nccl check" FAIL "rc $rc: $(head -c 200 "$log_dir/nccl_check.txt")"
fi

# --- the tests: the gpu-labelled ones, and the host-side ones of the real backend --------------
run_tests() {
  local label="$1" binary="$2" log="$3"
  local rc=0
  timeout 240 "$binary" --gtest_brief=1 >"$log" 2>&1 || rc=$?
  local passed skipped
  passed="$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  skipped="$(sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  if [[ $rc -eq 0 ]]; then
    row "$label" PASS "${passed:-0} passed${skipped:+, $skipped skipped}"
  else
    row "$label" FAIL "rc $rc: $(grep -m1 -E 'FAILED|Failure' "$log" | head -c 160)"
  fi
}
if [[ -x "$bin_dir/kvsim_real_gpu_tests" ]]; then
  if [[ -f "$build_dir/CTestTestfile.cmake" && -z "${KVSIM_BIN_DIR:-}" ]]; then
    rc=0
    (cd "$build_dir" && timeout 240 ctest -L gpu --output-on-failure) >"$log_dir/ctest_gpu.log" 2>&1 || rc=$?
    summary="$(grep -m1 'tests passed' "$log_dir/ctest_gpu.log" || true)"
    if [[ $rc -eq 0 ]]; then row "ctest -L gpu" PASS "${summary:-ok}"; else row "ctest -L gpu" FAIL "${summary:-rc $rc}"; fi
  else
    run_tests "gpu tests" "$bin_dir/kvsim_real_gpu_tests" "$log_dir/gpu_tests.log"
  fi
fi
[[ -x "$bin_dir/kvsim_real_tests" ]] && run_tests "real tests (host)" "$bin_dir/kvsim_real_tests" "$log_dir/real_tests.log"

# --- the benchmark ----------------------------------------------------------------------------
if [[ -x "$bin_dir/kvsim_real_bench" ]]; then
  rc=0
  timeout 150 "$bin_dir/kvsim_real_bench" >"$log_dir/bench.txt" 2>&1 || rc=$?
  cat "$log_dir/bench.txt"
  timeout 150 "$bin_dir/kvsim_real_bench" --json >"$log_dir/bench.json" 2>&1 || true
  if [[ $rc -eq 0 ]]; then
    ratio="$(sed -n 's/.*core\/raw \([0-9.]*\).*/\1/p' "$log_dir/bench.txt")"
    pct="$(sed -n 's/.*bookkeeping \(-\{0,1\}[0-9.]*\)%.*/\1/p' "$log_dir/bench.txt")"
    met="$(grep -q 'target < 2%: met' "$log_dir/bench.txt" && echo PASS || echo MISS)"
    row "bench 64 KiB pages" "$met" "core/raw ${ratio:-?} (${pct:-?}% bookkeeping, target < 2%)"
  else
    row "bench 64 KiB pages" FAIL "rc $rc: $(head -c 160 "$log_dir/bench.txt")"
  fi
fi

# --- the table --------------------------------------------------------------------------------
{
  echo
  echo "kvsim gpu_check ($(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - started)) s):" \
       "$(tr '\n' ';' 2>/dev/null <"$log_dir/nvidia-smi.txt" | sed 's/;$//')"
  printf '%-34s %-5s %s\n' check result detail
  for r in "${rows[@]}"; do
    IFS='|' read -r check result detail <<<"$r"
    printf '%-34s %-5s %s\n' "$check" "$result" "$detail"
  done
  if [[ $failures -eq 0 ]]; then echo "all checks passed"; else echo "$failures check(s) did not pass"; fi
} | tee "$log_dir/table.txt"
[[ $failures -eq 0 ]]
