#!/usr/bin/env bash
# A run recorded on real hardware (here the host data plane, no GPU) replays in the simulator
# to the same finding.
#   recording_replay_test.sh KVSIM_REAL KVSIM CATALOGUE
# page42 B1 recorded with `kvsim real --data-plane host --trace`: `kvsim replay --lenient`
# steers the simulator by the recorded order of the core's decisions to I3, with every core
# decision of the simulator's run in the recorded order, whatever the seed of the walk that
# draws what the recording leaves open (a walk alone puts prefill's allocation before
# decode's in about half its runs); the steered run, written with --trace, replays strictly.
# hicache_local_active H2 recorded: I6, which a walk alone does not find (seed 1). page42 safe
# recorded: replays clean. page42 B1 recorded as two rank processes (--ranks 2) replays to I3,
# hicache_local_active H2 recorded as two rank processes to I6.
# And the one-line refusals (a strict replay of a recording, an unknown origin, --trace with a
# simulator trace, a bad --trace path before the run).
set -u
real=$1 kvsim=$2 catalogue=$3
# The tsan tree builds only the real backend's binaries (CMakePresets.json): without kvsim
# there is nothing to replay in, which ctest reports as skipped (SKIP_RETURN_CODE 77).
if [[ ! -x $kvsim ]]; then
  echo "skipped: no kvsim built in this tree ($kvsim)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

record() {  # SCENARIO VARIANT EXPECTED_EXIT [ARGS...] -> $dir/SCENARIO.VARIANT.json
  "$real" --data-plane host --scenario "$1" --variant "$2" --catalogue "$catalogue" \
    --trace "$dir/$1.$2.json" "${@:4}" >"$dir/record.out" 2>&1
  local status=$?
  [[ $status -eq $3 ]] || { cat "$dir/record.out"; fail "kvsim real $1 $2: exit $status, expected $3"; }
  grep -q '"origin": "real"' "$dir/$1.$2.json" || fail "$1 $2: the recording is not marked origin real"
  [[ ! -e "$dir/$1.$2.json.tmp" ]] || fail "$1 $2: a temporary file was left behind"
}

replay() {  # FILE EXPECTED_EXIT EXPECTED_TEXT [ARGS...]
  local file=$1 expected_exit=$2 expected=$3
  shift 3
  "$kvsim" replay --lenient "$file" "$@" >"$dir/replay.out" 2>&1
  local status=$?
  if [[ $status -ne $expected_exit ]] || ! grep -qF -- "$expected" "$dir/replay.out"; then
    cat "$dir/replay.out"
    fail "replay $(basename "$file") $*: exit $status (expected $expected_exit), wanted '$expected'"
  fi
}

record page42 B1 1
replay "$dir/page42.B1.json" 0 "replayed: I3: rank 1 freed page 0 of room 42/gen 0"
# The steered run keeps to the recorded order whichever seed draws the open choices.
for seed in 1 2 3 4 5 6 7 8; do
  sed "s/\"seed\": \"1\"/\"seed\": \"$seed\"/" "$dir/page42.B1.json" >"$dir/seeded.json"
  replay "$dir/seeded.json" 0 '"own":0' --json
  grep -qF '"invariant":"I3"' "$dir/replay.out" || fail "seed $seed: not I3"
done
# A failure seen on real hardware becomes a deterministic test: the steered run as a trace.
replay "$dir/page42.B1.json" 0 "came out as recorded" --trace "$dir/steered.json"
"$kvsim" replay "$dir/steered.json" >"$dir/strict.out" 2>&1 ||
  { cat "$dir/strict.out"; fail "the steered run's trace does not replay strictly"; }

# Prefill and decode as two processes: their logs merged by the clock they share.
record page42 B1 1 --ranks 2
grep -q 'r0.prefill.0 core_decided rank 0 token_accepted' "$dir/page42.B1.json" &&
  grep -q 'r1.decode.0 core_decided rank 1 page_freed' "$dir/page42.B1.json" ||
  fail "--ranks 2: the recording lacks a rank's events"
replay "$dir/page42.B1.json" 0 "replayed: I3: rank 1 freed page 0 of room 42/gen 0"

record hicache_local_active H2 1
replay "$dir/hicache_local_active.H2.json" 0 "replayed: I6: the storage read of room 22/gen 0"
# Each rank of the attention group a process of its own: both logs in the recording.
record hicache_local_active H2 1 --ranks 2
for rank in 0 1; do
  grep -q "core_decided rank $rank host_pages_freed" "$dir/hicache_local_active.H2.json" ||
    fail "hicache --ranks 2: the recording lacks rank $rank's frees"
done
replay "$dir/hicache_local_active.H2.json" 0 "replayed: I6: the storage read of room 22/gen 0"

record page42 safe 0
replay "$dir/page42.safe.json" 0 "replayed: no finding"

# Refusals: one line, exit 2.
"$kvsim" replay "$dir/page42.B1.json" >"$dir/err.out" 2>&1
[[ $? -eq 2 && $(wc -l <"$dir/err.out") -eq 1 ]] && grep -q "use --lenient" "$dir/err.out" ||
  { cat "$dir/err.out"; fail "a strict replay of a recording is not refused in one line"; }
sed 's/"origin": "real"/"origin": "elsewhere"/' "$dir/page42.B1.json" >"$dir/foreign.json"
"$kvsim" replay --lenient "$dir/foreign.json" >"$dir/err.out" 2>&1
[[ $? -eq 2 && $(wc -l <"$dir/err.out") -eq 1 ]] && grep -q "field 'origin'" "$dir/err.out" ||
  { cat "$dir/err.out"; fail "an unknown origin is not refused in one line"; }
"$kvsim" replay "$dir/steered.json" --trace "$dir/again.json" >"$dir/err.out" 2>&1
[[ $? -eq 2 && $(wc -l <"$dir/err.out") -eq 1 ]] ||
  { cat "$dir/err.out"; fail "--trace with a simulator trace is not refused in one line"; }
"$real" --data-plane host --scenario page42 --variant B1 --catalogue "$catalogue" \
  --trace "$dir/no/such/dir/t.json" >"$dir/err.out" 2>&1
[[ $? -eq 2 && $(wc -l <"$dir/err.out") -eq 1 ]] && grep -q "no such directory" "$dir/err.out" ||
  { cat "$dir/err.out"; fail "a --trace in a missing directory is not refused in one line before the run"; }
for bad in - "$dir"; do
  "$real" --data-plane host --scenario page42 --variant B1 --catalogue "$catalogue" \
    --trace "$bad" >"$dir/err.out" 2>&1
  [[ $? -eq 2 && $(wc -l <"$dir/err.out") -eq 1 ]] && grep -qE "standard output|is a directory" "$dir/err.out" ||
    { cat "$dir/err.out"; fail "--trace '$bad' is not refused in one line before the run"; }
done

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ok: recordings of page42 B1, hicache_local_active H2 and page42 safe replay to their findings"
