#!/usr/bin/env bash
# The real backend on a GPU machine, in one go (no network needed):
#   - every scenario the real backend scripts, red (its breaking variant: the finding the
#     simulator reports must be among the real run's) and green (safe: no finding); page42 red
#     must show the bytes it found (a canary read back where it does not belong);
#   - the same on the host data plane (`--data-plane host`), a transfer scenario's prefill
#     and decode as two processes (`--ranks 2`), and a HiCache case's attention group one
#     process per rank (`--ranks N`, collectives over TCP), where this kvsim real has them;
#   - page42 red (B1) and green (safe) with prefill and decode as two processes on the GPU
#     (`--data-plane cuda --ranks 2`: decode's pages by CUDA IPC), where this kvsim real has it;
#   - the NCCL check: one process on one GPU; one process per GPU (torchrun's variables on
#     loopback, a fresh run key) on several;
#   - the gpu-labelled tests and the real backend's host tests;
#   - the copy benchmark: the core's bookkeeping against raw cudaMemcpyAsync, 64 KiB pages
#     (target: under 2%).
# Prints a table last: one row per check, PASS, FAIL, MISS (a benchmark target missed) or SKIP
# (not available here).
#
#   tools/gpu_check.sh [--build-dir DIR] [--no-build] [--budget-s SECONDS]
#
# Binaries come from DIR/bin (default build/, the default preset), built when missing:
# kvsim_real, or else `kvsim real`. KVSIM_BIN_DIR points at binaries carried from another
# machine instead (then nothing is built). With OUT set, every log, JSON result and the table
# (table.txt, table.tsv) are written under "$OUT". The whole check keeps within the budget
# (default 470 s, under 8 minutes): a step that would start past it is a FAIL row ("not run:
# time budget spent"), and each step's own limit is cut to what is left.
# Exit status: 0 every check passed (MISS and SKIP included), 1 a check failed, 2 usage error,
# no GPU, or nothing to run.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

usage_lines=28  # the comment above, for --help
die_usage() { echo "gpu_check: $*" >&2; exit 2; }

build_dir=build
build=auto
budget_s=470
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) [[ $# -ge 2 ]] || die_usage "--build-dir needs a value"
                 build_dir="$2"; shift 2 ;;
    --no-build) build=no; shift ;;
    --budget-s) [[ $# -ge 2 ]] || die_usage "--budget-s needs a value"
                [[ "$2" =~ ^[1-9][0-9]{0,4}$ ]] || die_usage "--budget-s takes whole seconds (1..99999), not '$2'"
                budget_s="$2"; shift 2 ;;
    -h|--help) sed -n "2,${usage_lines}p" "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "unknown argument '$1' (--build-dir DIR, --no-build, --budget-s SECONDS)" ;;
  esac
done
command -v python3 >/dev/null || die_usage "python3 is needed to read the JSON results"

started=$SECONDS
out_dir="${OUT:-}"
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir" || die_usage "cannot create OUT=$out_dir"
  log_dir="$out_dir"
else
  log_dir="$(mktemp -d)"
  trap 'rm -rf "$log_dir"' EXIT
fi
rows=()      # "check|result|detail" for the final table
failures=0

say() { echo "gpu_check: $*"; }
row() {  # check, result (PASS, FAIL, MISS: a benchmark target missed, SKIP: not run), detail
  rows+=("$1|$2|$3")
  if [[ "$2" == FAIL ]]; then failures=$((failures + 1)); fi
  printf 'gpu_check: %-5s %s: %s\n' "$2" "$1" "$3"
}
# Seconds a step may take: its own limit, cut to what is left of the budget (0: none left).
limit_s() {
  local own="$1" left=$((budget_s - (SECONDS - started)))
  if (( left < 5 )); then echo 0; elif (( own < left )); then echo "$own"; else echo "$left"; fi
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
  # Minutes of building for nothing on a machine without a GPU: say so first.
  if ! compgen -G "/dev/nvidia[0-9]*" >/dev/null && ! command -v nvidia-smi >/dev/null; then
    echo "gpu_check: no GPU here (no /dev/nvidia* device, no nvidia-smi): nothing to check" >&2
    exit 2
  fi
  say "building ${targets[*]} in $build_dir ($(nproc) cores)"
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
  row build PASS "$((SECONDS - t0)) s"
fi

real_cmd=()
if [[ -x "$bin_dir/kvsim_real" ]]; then
  real_cmd=("$bin_dir/kvsim_real")
elif [[ -x "$bin_dir/kvsim" ]] && "$bin_dir/kvsim" real --help >/dev/null 2>&1; then
  real_cmd=("$bin_dir/kvsim" real)
else
  echo "gpu_check: neither $bin_dir/kvsim_real nor '$bin_dir/kvsim real' is available (build it, or set KVSIM_BIN_DIR)" >&2
  exit 2
fi
say "using ${real_cmd[*]}"
catalogue="$repo_root/scenarios/catalogue.json"
# A kvsim real with --data-plane runs on the host where it finds no GPU: ask for the GPU.
real_help="$("${real_cmd[@]}" --help 2>&1 || true)"
cuda_args=()
grep -q -- "--data-plane" <<<"$real_help" && cuda_args=(--data-plane cuda)

# --- is there a GPU at all? ----------------------------------------------------------------------
probe_rc=0
timeout 60 "${real_cmd[@]}" --scenario page42 --variant safe --json --catalogue "$catalogue" \
  "${cuda_args[@]}" >"$log_dir/probe.json" 2>"$log_dir/probe.err" || probe_rc=$?
if [[ $probe_rc -eq 2 ]] && grep -q "no CUDA device found" "$log_dir/probe.err"; then
  echo "gpu_check: no GPU here ($(head -c 200 "$log_dir/probe.err" | tr '\n' ' ' | sed 's/ *$//')): nothing to check" >&2
  exit 2
fi
gpus=1
gpu_names=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader \
    >"$log_dir/nvidia-smi.txt" 2>&1 || true
  listed="$(grep -c . "$log_dir/nvidia-smi.txt" || true)"
  [[ "$listed" =~ ^[1-9][0-9]*$ ]] && gpus="$listed"
  gpu_names="$(tr '\n' ';' <"$log_dir/nvidia-smi.txt" | sed 's/;$//')"
fi
say "$gpus GPU(s)${gpu_names:+: $gpu_names}"

# --- scenarios, red and green ------------------------------------------------------------------
# One JSON result read back:
#   "first invariant|every invariant|timing-dependent?|bytes evidence|where|backend".
read_result() {
  python3 - "$1" <<'PY' 2>/dev/null || echo "|||"
import json, re, sys
try:
    o = json.load(open(sys.argv[1]))
except Exception:
    print("|||"); sys.exit(0)
found = ([o["finding"]] if o.get("finding") else []) + list(o.get("also") or [])
first = found[0]["invariant"] if found else ""
every = ",".join(f["invariant"] for f in found)
timing = "yes" if any(f.get("timing_dependent") for f in found) else "no"
# What the data plane read back: a reader's page holding another request's bytes (I7), or a
# late write's bytes found in a page given to another request (I1).
evidence = ""
for pattern in (r"found bytes written for [^;]*", r"the page holds [^;]*'s bytes[^;]*"):
    for f in found:
        m = re.search(pattern, f.get("message", ""))
        if m and not evidence:
            evidence = f["invariant"] + ": " + m.group(0).strip()
where = "%s dev%s" % (o.get("devices", "?"), ", peers simulated" if o.get("simulated_peers") else "")
print("|".join([first, every, timing, evidence.replace("|", "/")[:110], where, str(o.get("backend", ""))]))
PY
}

# run_scenario LABEL NAME VARIANT EXPECTED_INVARIANT BACKEND [extra args...]
run_scenario() {
  local label="$1" name="$2" variant="$3" expected="$4" backend="$5"
  shift 5
  local limit; limit="$(limit_s 90)"
  if [[ "$limit" == 0 ]]; then row "$label" FAIL "not run: time budget spent"; return; fi
  local tag="${*//[^a-z0-9]/}"
  local json="$log_dir/real_${name}_${variant}${tag:+_$tag}.json" rc=0
  timeout "$limit" "${real_cmd[@]}" --scenario "$name" --variant "$variant" --json \
    --catalogue "$catalogue" "$@" >"$json" 2>"$json.err" || rc=$?
  local first every timing evidence where ran_on
  IFS='|' read -r first every timing evidence where ran_on <<<"$(read_result "$json")"
  local err; err="$(head -c 160 "$json.err" | tr '\n' ' ')"
  if [[ -n "$ran_on" && "$ran_on" != "$backend" ]]; then
    row "$label" FAIL "ran on the $ran_on data plane, not $backend"
    return
  fi
  if [[ "$variant" == safe ]]; then
    if [[ $rc -eq 0 && -z "$every" ]] && grep -q '"finding":null' "$json"; then
      row "$label" PASS "no finding ($where)"
    else
      row "$label" FAIL "rc $rc${every:+, findings $every} $err"
    fi
    return
  fi
  if [[ $rc -ne 1 || -z "$first" ]]; then
    row "$label" FAIL "rc $rc, expected a finding ($expected) $err"
  elif [[ -n "$expected" && ",$every," != *",$expected,"* ]]; then
    row "$label" FAIL "found $every, the simulator reports $expected"
  elif [[ "$name" == page42 && -z "$evidence" ]]; then
    row "$label" FAIL "found $every, but no page read back holding another request's bytes"
  else
    local detail="found $every ($where)"
    [[ "$timing" == yes ]] && detail+=", timing-dependent"
    [[ -n "$evidence" ]] && detail+="; $evidence"
    row "$label" PASS "$detail"
  fi
}

# One line per scripted scenario: "NAME  (KIND; breaks with VARIANT, simulator reports INV)".
"${real_cmd[@]}" --list --catalogue "$catalogue" >"$log_dir/list.txt" 2>&1 || true
mapfile -t scripted < <(grep -E '^[a-z0-9_]+  \(' "$log_dir/list.txt" || true)
if [[ ${#scripted[@]} -eq 0 ]]; then
  row "scenario list" FAIL "--list named no scenario: $(head -c 160 "$log_dir/list.txt")"
fi
names=()
for line in "${scripted[@]}"; do
  name="${line%%  *}"
  kind="$(sed -n 's/^[^(]*(\([a-z]*\);.*/\1/p' <<<"$line")"
  breaking="$(sed -n 's/.*breaks with \([^,]*\),.*/\1/p' <<<"$line")"
  expected="$(sed -n 's/.*simulator reports \([A-Z0-9]*\).*/\1/p' <<<"$line")"
  names+=("$name|$kind|$breaking|$expected")
  run_scenario "$name $breaking" "$name" "$breaking" "$expected" cuda "${cuda_args[@]}"
  run_scenario "$name safe" "$name" safe "" cuda "${cuda_args[@]}"
done

# --- the host data plane: every rank a process of its own ------------------------------------
# A HiCache case's ranks: its attention group in the catalogue.
attention_group() {
  python3 - "$catalogue" "$1" <<'PY' 2>/dev/null || true
import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    if s["name"] == sys.argv[2]:
        print(s["topology"]["attention_group"])
PY
}
if [[ ${#cuda_args[@]} -gt 0 ]]; then
  for entry in "${names[@]}"; do
    IFS='|' read -r name kind breaking expected <<<"$entry"
    host_args=(--data-plane host) where="host"
    if [[ "$kind" == transfer ]] && grep -q -- "--ranks" <<<"$real_help"; then
      host_args+=(--ranks 2) where="host, 2 processes"
    elif [[ "$kind" == prefetch ]] && grep -q "attention group" <<<"$real_help"; then
      group="$(attention_group "$name")"
      [[ -n "$group" ]] && host_args+=(--ranks "$group") where="host, $group processes"
    fi
    run_scenario "$where: $name $breaking" "$name" "$breaking" "$expected" host "${host_args[@]}"
    run_scenario "$where: $name safe" "$name" safe "" host "${host_args[@]}"
  done
else
  row "host data plane" SKIP "this kvsim real has no --data-plane"
fi

# --- the CUDA data plane across processes: page42's prefill and decode on one GPU ---------------
# Decode's pages opened by CUDA IPC, the gates host-mapped words (cuda_process_plane.h); never
# run on hardware before a GPU was lent.
if [[ ${#cuda_args[@]} -eq 0 ]]; then
  :  # no --data-plane at all: the host data plane's SKIP row says so
elif grep -q "cuda for a transfer" <<<"$real_help"; then
  page42_expected=""
  for entry in "${names[@]}"; do
    IFS='|' read -r name kind breaking expected <<<"$entry"
    [[ "$name" == page42 ]] && page42_expected="$expected"
  done
  run_scenario "cuda, 2 processes: page42 B1" page42 B1 "$page42_expected" cuda \
    --data-plane cuda --ranks 2
  run_scenario "cuda, 2 processes: page42 safe" page42 safe "" cuda --data-plane cuda --ranks 2
else
  row "cuda, 2 processes" SKIP "this kvsim real has no --data-plane cuda --ranks 2"
fi

# --- NCCL through the launcher path ------------------------------------------------------------
nccl_check() {
  local limit; limit="$(limit_s 90)"
  if [[ "$limit" == 0 ]]; then row "nccl check" FAIL "not run: time budget spent"; return; fi
  if (( gpus < 2 )); then
    # One process (WORLD_SIZE unset): NCCL refuses two ranks on one device.
    local rc=0
    timeout "$limit" "${real_cmd[@]}" --nccl-check >"$log_dir/nccl_check.txt" 2>&1 || rc=$?
    if [[ $rc -eq 0 ]]; then
      row "nccl check (1 process)" PASS "$(sed -n 's/.*: \(all_reduce.*\)/\1/p' "$log_dir/nccl_check.txt" | head -c 90)"
    else
      row "nccl check (1 process)" FAIL "rc $rc: $(head -c 200 "$log_dir/nccl_check.txt" | tr '\n' ' ')"
    fi
    return
  fi
  # One process per GPU, as torchrun starts them on one node, sharing a fresh run key.
  local key port pids=() rc failed=0 r
  key="$("${real_cmd[@]}" --new-run-key)" || { row "nccl check ($gpus processes)" FAIL "--new-run-key failed"; return; }
  port=$((29600 + RANDOM % 2000))
  for ((r = 0; r < gpus; r++)); do
    KVSIM_RUN_KEY="$key" RANK=$r WORLD_SIZE=$gpus LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port timeout "$limit" "${real_cmd[@]}" --nccl-check \
      >"$log_dir/nccl_check_rank$r.txt" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < gpus; r++)); do
    rc=0
    wait "${pids[$r]}" || rc=$?
    [[ $rc -eq 0 ]] || { failed=$((failed + 1)); echo "rc $rc" >>"$log_dir/nccl_check_rank$r.txt"; }
  done
  if [[ $failed -eq 0 ]]; then
    row "nccl check ($gpus processes)" PASS "$(sed -n 's/.*: \(all_reduce.*\)/\1/p' "$log_dir/nccl_check_rank0.txt" | head -c 90)"
  else
    row "nccl check ($gpus processes)" FAIL "$failed of $gpus ranks failed: $(grep -h -m1 . "$log_dir"/nccl_check_rank*.txt | head -c 200 | tr '\n' ' ')"
  fi
}
nccl_check

# --- the tests: the gpu-labelled ones, and the host-side ones of the real backend --------------
run_tests() {
  local label="$1" binary="$2" log="$3"
  local limit; limit="$(limit_s 150)"
  if [[ "$limit" == 0 ]]; then row "$label" FAIL "not run: time budget spent"; return; fi
  local rc=0
  timeout "$limit" "$binary" --gtest_brief=1 >"$log" 2>&1 || rc=$?
  local passed skipped
  passed="$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  skipped="$(sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)"
  if [[ $rc -eq 0 ]]; then
    row "$label" PASS "${passed:-0} passed${skipped:+, $skipped skipped}"
  else
    row "$label" FAIL "rc $rc: $(grep -m1 -E 'FAILED|Failure' "$log" | head -c 160)"
  fi
}
[[ -x "$bin_dir/kvsim_real_gpu_tests" ]] && run_tests "gpu tests" "$bin_dir/kvsim_real_gpu_tests" "$log_dir/gpu_tests.log"
[[ -x "$bin_dir/kvsim_real_tests" ]] && run_tests "real tests (host)" "$bin_dir/kvsim_real_tests" "$log_dir/real_tests.log"

# --- the benchmark ----------------------------------------------------------------------------
if [[ -x "$bin_dir/kvsim_real_bench" ]]; then
  limit="$(limit_s 150)"
  if [[ "$limit" == 0 ]]; then
    row "bench 64 KiB pages" FAIL "not run: time budget spent"
  else
    rc=0
    timeout "$limit" "$bin_dir/kvsim_real_bench" >"$log_dir/bench.txt" 2>&1 || rc=$?
    if [[ $rc -eq 0 ]]; then
      ratio="$(sed -n 's/.*core\/raw \([0-9.]*\).*/\1/p' "$log_dir/bench.txt" | head -1)"
      pct="$(sed -n 's/.*bookkeeping \(-\{0,1\}[0-9.]*\)%.*/\1/p' "$log_dir/bench.txt" | head -1)"
      if [[ -z "$ratio" || -z "$pct" ]]; then
        row "bench 64 KiB pages" FAIL "no 'core/raw' and 'bookkeeping N%' in its output"
      else
        met="$(grep -q 'target < 2%: met' "$log_dir/bench.txt" && echo PASS || echo MISS)"
        row "bench 64 KiB pages" "$met" "core/raw $ratio ($pct% bookkeeping, target < 2%)"
      fi
    else
      row "bench 64 KiB pages" FAIL "rc $rc: $(head -c 160 "$log_dir/bench.txt" | tr '\n' ' ')"
    fi
  fi
fi

# --- the table, last ----------------------------------------------------------------------------
: >"$log_dir/table.tsv"
{
  echo
  echo "kvsim gpu_check ($(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - started)) s of $budget_s): $gpus GPU(s)${gpu_names:+: $gpu_names}"
  printf '%-36s %-6s %s\n' check result detail
  for r in "${rows[@]}"; do
    IFS='|' read -r check result detail <<<"$r"
    printf '%-36s %-6s %s\n' "$check" "$result" "$detail"
    printf '%s\t%s\t%s\n' "$check" "$result" "$detail" >>"$log_dir/table.tsv"
  done
  if [[ $failures -eq 0 ]]; then echo "all checks passed"; else echo "$failures check(s) failed"; fi
} | tee "$log_dir/table.txt"
[[ $failures -eq 0 ]]
