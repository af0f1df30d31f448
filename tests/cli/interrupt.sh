#!/usr/bin/env bash
# Ctrl-C (SIGINT) behaves like SIGTERM: every rank agrees at the next step
# boundary, saves a checkpoint and exits 3, and so does mpiexec (see the note
# on hydra below).
# Three ways in: SIGINT to mpiexec (it forwards it to the ranks), SIGINT to
# mpiexec's process group as a terminal's Ctrl-C sends it (hydra runs its proxy
# and the ranks in sessions of their own, so only mpiexec is in that group), and
# a second SIGINT to the ranks, which aborts at once (a rank stuck by fault
# injection keeps the others in a collective, so the first is never honoured):
# the ranks exit 130.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
common=("${tiny[@]}" --log.every=1 --train.steps=100000)
# Each rank reports its own exit status, into OUT.status (a file: what hydra
# forwards from a rank it is tearing down can be lost).
rank=(bash -c '"$0" "$@"; rc=$?; echo "rank exit status $rc" >> "$RANK_STATUS"; exit $rc' "$ZEROPP")
# start OUT ARGS...: mpiexec in the background as the leader of its own session,
# like a job started at a terminal (not under `timeout`: timeout passes a
# SIGINT on to its whole process group, and a second SIGINT makes hydra kill
# the job), with a guard that kills it after 300 s.
start() {
  local out=$1
  shift
  RANK_STATUS="$out.status" setsid "$MPIEXEC" -n 2 "${rank[@]}" train inputs/default.toml "${common[@]}" --train.out_dir="$out" "$@" \
    > "$out.log" 2>&1 &
  launcher=$!
  (sleep 300 && kill -KILL "$launcher") > /dev/null 2>&1 &
  guard=$!
  for _ in $(seq 300); do grep -q '^step 3/' "$out.log" 2> /dev/null && break; sleep 0.2; done
}
ranks_of() { pgrep -f -- "^$ZEROPP train .*--train.out_dir=$1( |\$)"; }
# Hydra (MPICH 4.0.2) sometimes exits 0 after forwarding SIGINT although every
# rank exited 3 (seen about 1 run in 8; a race inside mpiexec): said loudly.
stopped_ok() {  # stopped_ok NAME OUT RC
  local latest ranks3
  latest=$(cat "$2/checkpoints/latest" 2> /dev/null)
  ranks3=$(grep -c '^rank exit status 3$' "$2.status")
  if [[ $3 -eq 0 && $ranks3 -eq 2 ]]; then echo "NOTE $1: both ranks exited 3 but mpiexec reported 0 (hydra's race)"; fi
  if [[ $3 -eq 3 || $3 -eq 0 ]] && [[ $ranks3 -eq 2 ]] && grep -q 'stopping at step .*(signal)' "$2.log" &&
    [[ -n $latest ]] && "$ZEROPP" ckpt verify "$2/checkpoints/$latest" > /dev/null; then
    ok "$1: both ranks exit 3 (mpiexec: $3), $latest saved and verifies ($(grep 'stopping at step' "$2.log"))"
  else
    bad "$1: rc=$3 latest=${latest:-none}"
    tail -5 "$2.log"
  fi
}

# 1. SIGINT to mpiexec alone: it forwards it to the ranks.
out="$work/launcher"
start "$out"
kill -INT "$launcher"
wait "$launcher"
rc=$?
kill "$guard" 2> /dev/null
stopped_ok "SIGINT to mpiexec" "$out" $rc

# 2. Ctrl-C at a terminal: SIGINT to the foreground process group, here mpiexec
#    as the leader of its own session.
out="$work/group"
start "$out"
kill -INT -- "-$launcher"
wait "$launcher"
rc=$?
kill "$guard" 2> /dev/null
stopped_ok "Ctrl-C (SIGINT to mpiexec's process group)" "$out" $rc

# 3. A second SIGINT aborts at once: rank 1 stalls at step 5, the other waits in
#    a collective (watchdog at 120 s), so the first SIGINT is never acted on.
out="$work/twice"
start "$out" --comm.timeout_s=120 --comm.fault_stall_rank=1 --comm.fault_stall_step=5
for _ in $(seq 300); do grep -q '^step 5/' "$out.log" 2> /dev/null && break; sleep 0.2; done
sleep 1
for _ in $(seq 50); do  # both ranks (pgrep can miss a process under load)
  pids=$(ranks_of "$out")
  [[ $(wc -w <<< "$pids") -eq 2 ]] && break
  sleep 0.1
done
t0=$(date +%s)
# shellcheck disable=SC2086
kill -INT $pids
sleep 1.5
alive=0
# shellcheck disable=SC2086
kill -0 $pids 2> /dev/null && alive=1  # the first SIGINT only asked them to stop
# shellcheck disable=SC2086
kill -INT $pids 2> /dev/null
wait "$launcher"
rc=$?
kill "$guard" 2> /dev/null
elapsed=$(($(date +%s) - t0))
# The ranks exit 130; mpiexec's own status then depends on how hydra tears
# down the rank still alive once the other has exited (130, 9 or 1 seen): any
# status but success (0), usage error (2) or a stop (3) means "aborted".
if [[ -n $pids && $alive -eq 1 && $rc -ne 0 && $rc -ne 2 && $rc -ne 3 && $elapsed -lt 60 ]] &&
  grep -q '^rank exit status 130$' "$out.status" && ! grep -q 'stopping at step' "$out.log" &&
  [[ ! -e "$out/checkpoints/latest" ]]; then
  ok "a second SIGINT aborts at once (exit $rc after ${elapsed}s, nothing saved)"
else
  bad "second SIGINT: rc=$rc after ${elapsed}s, alive after the first: $alive, ranks: ${pids:-none}"
  cat "$out.status"
  tail -5 "$out.log"
fi
finish
