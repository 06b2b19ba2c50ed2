#!/usr/bin/env bash
# `kvsim real --launched` as torchrun or srun would start it (real_backend/launch/launched_run.h):
# two processes started by hand with the launcher's variables, no kvsim parent. Each case
# checks the exit status and output of both ranks, and that no shared memory of the run is
# left in /dev/shm afterwards.
#   launched_ranks_test.sh KVSIM_REAL CATALOGUE CASE
# CASE: torchrun_B1 torchrun_safe slurm_B1 slurm_safe refusals region_exists wrong_key
#       rank1_killed rank1_refuses_the_memory rank0_terminated
set -u
bin=$1 catalogue=$2 case=$3
work=$(mktemp -d)
port=
# A failed case removes what its runs left, once it has said so.
trap 'rm -rf "$work"; [[ -n $port ]] && rm -f /dev/shm/kvsim-hp-*-"$port"' EXIT
fail() { echo "FAIL ($case): $*"; exit 1; }
key=$("$bin" --new-run-key) || fail "no run key"

# A port nobody listens on, nor on the next one (torchrun's rank 0 listens on MASTER_PORT + 1),
# below the kernel's ephemeral range: a port some connection holds as its own end cannot be
# bound either, and no probe sees that.
free_port() {
  local low=32768 p
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
  ((low > 12000)) || low=60000
  for _ in $(seq 50); do
    p=$((10000 + RANDOM % (low - 10002)))
    if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (echo >"/dev/tcp/127.0.0.1/$((p + 1))") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  fail "no free port"
}
port=$(free_port)
left_in_shm() { ls /dev/shm 2>/dev/null | grep -E "^kvsim-hp-[0-9a-f]{16}-$port\$"; }
check_nothing_left() {
  local left
  left=$(left_in_shm)
  [[ -z $left ]] || fail "left in /dev/shm: $left"
}

# rank R ARGS...: rank R with the launcher's variables (launcher torchrun or slurm; the key
# rank_key, else key), its output in $work/rank<R>. start_rank: the same in the background,
# its process id (the kvsim process itself: env execs it) in started_pid.
launcher=torchrun
rank_command() {
  local r=$1
  shift
  command=(env -u RANK -u WORLD_SIZE -u SLURM_PROCID -u SLURM_NTASKS MASTER_ADDR=127.0.0.1
    MASTER_PORT="$port" KVSIM_RUN_KEY="${rank_key:-$key}")
  if [[ $launcher == torchrun ]]; then
    command+=(RANK="$r" WORLD_SIZE=2 LOCAL_RANK="$r")
  else
    command+=(SLURM_PROCID="$r" SLURM_NTASKS=2 SLURM_LOCALID="$r")
  fi
  command+=("$bin" --data-plane host --launched --catalogue "$catalogue" "$@")
}
rank() {
  rank_command "$@"
  "${command[@]}" >"$work/rank$1" 2>&1
}
start_rank() {
  rank_command "$@"
  "${command[@]}" >"$work/rank$1" 2>&1 &
  started_pid=$!
}

# Both ranks refused: rank 0's and rank 1's exit `$1`, each printed one line saying `$2`.
both_refused() {
  echo "rank 0 (exit $status0): $(cat "$work/rank0")"
  echo "rank 1 (exit $status1): $(cat "$work/rank1")"
  [[ $status0 -eq $1 && $status1 -eq $1 ]] || fail "exits $status0 and $status1, expected $1 and $1"
  for r in 0 1; do
    [[ $(wc -l <"$work/rank$r") -eq 1 ]] || fail "rank $r: not one line"
    grep -qF "$2" "$work/rank$r" || fail "rank $r does not say: $2"
  done
}

# Both ranks of one run, rank 1 first as a launcher may start them in any order; sets
# status0/status1.
both() {
  start_rank 1 "$@"
  local pid1=$started_pid
  rank 0 "$@"
  status0=$?
  wait "$pid1"
  status1=$?
  echo "--- rank 0 (exit $status0)"
  cat "$work/rank0"
  echo "--- rank 1 (exit $status1)"
  cat "$work/rank1"
}

# The findings of a run: its finding and also lines.
findings() { grep -E '^(finding|also|no finding)' "$1"; }

# page42 as the parent-launched --ranks 2 reports it, then by hand: the same findings.
same_as_parent() {
  local variant=$1 expected_exit=$2
  "$bin" --data-plane host --ranks 2 --catalogue "$catalogue" --scenario page42 \
    --variant "$variant" >"$work/parent" 2>&1
  local parent_status=$?
  [[ $parent_status -eq $expected_exit ]] || fail "--ranks 2 exited $parent_status"
  both --scenario page42 --variant "$variant"
  [[ $status0 -eq $expected_exit ]] || fail "rank 0 exited $status0, expected $expected_exit"
  [[ $status1 -eq 0 ]] || fail "rank 1 exited $status1, expected 0"
  [[ ! -s $work/rank1 ]] || fail "rank 1 printed something"
  [[ "$(findings "$work/rank0")" == "$(findings "$work/parent")" ]] ||
    fail "findings differ from --ranks 2's: $(findings "$work/parent")"
  grep -q "sealed step frames" "$work/rank0" || fail "rank 0's report does not say how it ran"
}

# One refusal: exit 2 and exactly one line, which starts with `expected`.
refused() {
  local expected=$1
  shift
  env -u RANK -u WORLD_SIZE -u SLURM_PROCID -u SLURM_NTASKS -u MASTER_ADDR -u MASTER_PORT \
    -u KVSIM_RUN_KEY "$@" "$bin" --data-plane host --launched --catalogue "$catalogue" \
    --scenario page42 --variant B1 >"$work/out" 2>&1
  local status=$?
  echo "refused (exit $status): $(cat "$work/out")"
  [[ $status -eq 2 ]] || fail "exit $status, expected 2"
  [[ $(wc -l <"$work/out") -eq 1 ]] || fail "not one line"
  grep -qF -- "$expected" "$work/out" || fail "no '$expected'"
}

case $case in
  torchrun_B1 | slurm_B1)
    launcher=${case%_B1}
    same_as_parent B1 1
    # Rank 0 saw decode's pages through the shared memory rank 1 opened: the late write of
    # room 42/gen 0 and the foreign bytes that room 42/gen 1 read.
    grep -qF "finding: I3: rank 1 freed page 0 of room 42/gen 0" "$work/rank0" || fail "no I3"
    grep -qF "also: I1: a transfer of room 42/gen 0 wrote destination page 1 on rank 1" \
      "$work/rank0" || fail "no I1"
    grep -qF "also: I7: room 42/gen 1 read page 1 on rank 1 (its logical page 0) and found bytes written for room 42/gen 0" \
      "$work/rank0" || fail "no I7"
    ;;
  torchrun_safe | slurm_safe)
    launcher=${case%_safe}
    same_as_parent safe 0
    grep -qx "no finding" "$work/rank0" || fail "rank 0 did not say 'no finding'"
    ;;
  refusals)
    base=(MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" KVSIM_RUN_KEY="$key")
    refused "launcher: a launch of 2 ranks needs the run's key" \
      RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port"
    refused "launcher: a transfer scenario runs as 2 ranks (prefill 0, decode 1), but WORLD_SIZE is 3" \
      RANK=0 WORLD_SIZE=3 "${base[@]}"
    refused "launcher: a transfer scenario runs as 2 ranks (prefill 0, decode 1), but SLURM_NTASKS is 1" \
      SLURM_PROCID=0 SLURM_NTASKS=1 "${base[@]}"
    refused "launcher: RANK 2 is not below WORLD_SIZE 2" RANK=2 WORLD_SIZE=2 "${base[@]}"
    refused "launcher: SLURM_PROCID 5 is not below SLURM_NTASKS 2" \
      SLURM_PROCID=5 SLURM_NTASKS=2 "${base[@]}"
    refused "launcher: MASTER_ADDR is not set for a launch of 2 ranks" \
      RANK=0 WORLD_SIZE=2 MASTER_PORT="$port" KVSIM_RUN_KEY="$key"
    refused "launcher: MASTER_PORT is not set (srun sets none" \
      SLURM_PROCID=1 SLURM_NTASKS=2 MASTER_ADDR=127.0.0.1 KVSIM_RUN_KEY="$key"
    refused "launcher: --launched runs as one rank of a torchrun or srun launch" \
      "${base[@]}"
    refused "launcher: KVSIM_RUN_KEY must be 64 hex digits" \
      RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" KVSIM_RUN_KEY=0123
    ;;
  region_exists)
    # A second rank 0 of the same key and MASTER_PORT finds the first one's memory: refused,
    # and the first run's memory is not touched (it goes on once its rank 1 comes).
    start_rank 0 --scenario page42 --variant B1
    first=$started_pid
    for _ in $(seq 200); do
      [[ -n $(left_in_shm) ]] && break
      sleep 0.05
    done
    [[ -n $(left_in_shm) ]] || fail "the first rank 0 made no shared memory"
    [[ $(stat -c %a "/dev/shm/$(left_in_shm)") == 600 ]] || fail "not mode 600"
    env -u RANK -u WORLD_SIZE RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      KVSIM_RUN_KEY="$key" "$bin" --data-plane host --launched --catalogue "$catalogue" \
      --scenario page42 --variant B1 >"$work/second" 2>&1
    second=$?
    echo "second rank 0 (exit $second): $(cat "$work/second")"
    [[ $second -eq 2 ]] || fail "the second rank 0 exited $second, expected 2"
    [[ $(wc -l <"$work/second") -eq 1 ]] || fail "not one line"
    grep -qF "exists already" "$work/second" || fail "no 'exists already'"
    [[ -n $(left_in_shm) ]] || fail "the refused rank 0 removed the first run's memory"
    rank 1 --scenario page42 --variant B1
    status1=$?
    wait "$first"
    status0=$?
    echo "first run: rank 0 exit $status0, rank 1 exit $status1"
    [[ $status0 -eq 1 && $status1 -eq 0 ]] || fail "the first run did not finish as scripted"
    ;;
  wrong_key)
    # A rank 1 with another run's key is refused at the hello (it exits 2, one line); rank 0
    # says so on standard error as it happens and goes on accepting: the rank 1 with the
    # run's key then links, and the run completes as if nothing had happened.
    start_rank 0 --scenario page42 --variant B1
    pid0=$started_pid
    rank_key=$("$bin" --new-run-key)
    rank_command 1 --scenario page42 --variant B1
    "${command[@]}" >"$work/stranger" 2>&1
    status_stranger=$?
    echo "rank 1 with another key (exit $status_stranger): $(cat "$work/stranger")"
    [[ $status_stranger -eq 2 ]] || fail "the rank with another key exited $status_stranger"
    [[ $(wc -l <"$work/stranger") -eq 1 ]] || fail "the rank with another key: not one line"
    grep -qF "failed authentication at the hello: rank 0 did not prove the run's key" \
      "$work/stranger" || fail "the rank with another key does not say why"
    rank_key=$key
    rank 1 --scenario page42 --variant B1
    status1=$?
    wait "$pid0"
    status0=$?
    echo "--- rank 0 (exit $status0)"
    cat "$work/rank0"
    [[ $status0 -eq 1 && $status1 -eq 0 ]] || fail "exits $status0 and $status1, expected 1 and 0"
    grep -qF "closed the connection during the handshake, before its proof (it has another run's key, or it died) (1 refused so far)" \
      "$work/rank0" || fail "rank 0 does not say it refused the rank with another key"
    grep -qF "finding: I3: rank 1 freed page 0 of room 42/gen 0" "$work/rank0" ||
      fail "rank 0's run did not complete"
    check_nothing_left
    ;;
  rank1_killed)
    # B5 loses a drain-ACK: the script waits 2 s for it (liveness) with both ranks running;
    # rank 1 is killed in that wait. Rank 0 reports it at once (exit 3, one line).
    start_rank 1 --scenario page42 --variant B5
    pid1=$started_pid
    start_rank 0 --scenario page42 --variant B5
    pid0=$started_pid
    sleep 0.8
    kill -KILL "$pid1"
    wait "$pid1"
    wait "$pid0"
    status0=$?
    echo "rank 0 (exit $status0): $(cat "$work/rank0")"
    [[ $status0 -eq 3 ]] || fail "rank 0 exited $status0, expected 3"
    [[ $(wc -l <"$work/rank0") -eq 1 ]] || fail "rank 0: not one line"
    # Whichever of rank 0's threads hears it first (the script's step link, or prefill's
    # control messages) says so.
    grep -qF "peer rank 1 (127.0.0.1:" "$work/rank0" || fail "rank 0 does not name rank 1"
    grep -qF "closed its link to rank 0 (died?)" "$work/rank0" ||
      fail "rank 0 does not say rank 1 went away"
    ;;
  rank1_refuses_the_memory)
    # A failed run while the memory still has its name: rank 1 (its MASTER_PORT not rank 0's,
    # the rendezvous port the same) expects the memory under another name and refuses what
    # rank 0 says; rank 0 reports it (exit 3, one line) and removes the name on its way out.
    env -u RANK -u WORLD_SIZE RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$((port + 7)) KVSIM_RENDEZVOUS_PORT=$((port + 1)) KVSIM_RUN_KEY="$key" \
      "$bin" --data-plane host --launched --catalogue "$catalogue" --scenario page42 \
      --variant B1 >"$work/rank1" 2>&1 &
    pid1=$!
    rank 0 --scenario page42 --variant B1
    status0=$?
    wait "$pid1"
    status1=$?
    both_refused 3 "this run's key and MASTER_PORT name the memory"
    ;;
  rank0_terminated)
    # A launcher stops a job with SIGTERM (torchrun, srun: SIGKILL after a grace period), Ctrl-C
    # is SIGINT, a closed terminal SIGHUP. Rank 0, started alone, waits for rank 1 with the
    # memory made and named; told to stop, it removes the name and dies of the signal
    # (exit 128 + N). `env --default-signal`: bash starts a background job with SIGINT ignored,
    # and rank 0 leaves an ignored signal ignored.
    for signal in TERM INT HUP; do
      rank_command 0 --scenario page42 --variant B1
      command=(env --default-signal="$signal" "${command[@]}")
      "${command[@]}" >"$work/rank0" 2>&1 &
      pid0=$!
      for _ in $(seq 200); do
        [[ -n $(left_in_shm) ]] && break
        sleep 0.05
      done
      [[ -n $(left_in_shm) ]] || fail "rank 0 made no shared memory"
      kill -"$signal" "$pid0"
      { wait "$pid0"; } 2>/dev/null  # bash's own "Hangup" notice
      status0=$?
      echo "SIG$signal: rank 0 exit $status0: $(cat "$work/rank0")"
      expected=$((128 + $(kill -l "$signal")))
      [[ $status0 -eq $expected ]] || fail "SIG$signal: rank 0 exited $status0, expected $expected"
      check_nothing_left
    done
    # A signal rank 0 was started with ignored stays ignored: bash's background SIGINT.
    start_rank 0 --scenario page42 --variant B1
    pid0=$started_pid
    for _ in $(seq 200); do
      [[ -n $(left_in_shm) ]] && break
      sleep 0.05
    done
    kill -INT "$pid0"
    sleep 0.3
    kill -0 "$pid0" 2>/dev/null || fail "rank 0 started with SIGINT ignored died of it"
    [[ -n $(left_in_shm) ]] || fail "an ignored SIGINT removed the name"
    kill -TERM "$pid0"
    wait "$pid0"
    status0=$?
    [[ $status0 -eq 143 ]] || fail "then SIGTERM: rank 0 exited $status0, expected 143"
    ;;
  *)
    fail "no such case"
    ;;
esac
check_nothing_left
echo "ok: $case"
