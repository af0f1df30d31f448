#!/usr/bin/env bash
# checkpoint.async = true end to end, on 2 ranks:
#  1. the run's losses and its checkpoints' tensors equal bit for bit those of
#     the same run with synchronous saves; the log says how long training was
#     blocked, and a resume from an asynchronous checkpoint is bit-identical;
#  2. a rank killed (SIGKILL) by fault injection inside the background write,
#     at a random dataset, and by kill -9 at random moments of a run saving
#     every step: `latest` always names a checkpoint that verifies, and the
#     run resumes from it;
#  3. a bad value is one line naming the key, and the run folder is untouched.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
py=/usr/bin/python3
train() {  # train OUT_DIR ARGS...
  local out=$1
  shift
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --log.every=1 \
    --checkpoint.every=2 --train.out_dir="$out" "$@" > "$out.log" 2>&1
}
# same_tensors A B: every tensor of checkpoint files A and B bitwise equal
same_tensors() {
  "$py" - "$1" "$2" << 'PY'
import h5py, sys, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and not n.startswith("state") else None)
assert len(names) > 0
for n in names:
    assert np.array_equal(a[n][()].view(np.uint32), b[n][()].view(np.uint32)), n
PY
}
losses() {  # losses OUT_DIR: "step loss" per row of metrics.h5
  "$py" -c '
import h5py, sys
for r in h5py.File(sys.argv[1] + "/metrics.h5", "r", locking=False)["steps"][:]:
    print(int(r["step"]), repr(float(r["loss"])))' "$1"
}
verifies_latest() {  # verifies_latest OUT_DIR: `latest` names a checkpoint that verifies
  local latest
  latest=$(cat "$1/checkpoints/latest" 2> /dev/null) && [[ -n $latest ]] &&
    "$ZEROPP" ckpt verify "$1/checkpoints/$latest" > /dev/null 2>&1
}

# 1. Synchronous and asynchronous saves of the same run.
train "$work/sync" --train.steps=8 || { bad "synchronous run"; tail -3 "$work/sync.log"; }
train "$work/async" --train.steps=8 --checkpoint.async=true || { bad "asynchronous run"; tail -3 "$work/async.log"; }
n=0
for s in 2 4 6 8; do
  f=checkpoints/$(printf 'step_%08d.h5' $s)
  [[ -e $work/async/$f ]] || continue
  same_tensors "$work/sync/$f" "$work/async/$f" && n=$((n + 1))
done
if ((n == 3)) && [[ $(losses "$work/sync") == "$(losses "$work/async")" ]]; then  # keep 3: steps 4, 6, 8
  ok "asynchronous saves: losses and the $n checkpoints kept bit for bit the synchronous run's"
else bad "asynchronous saves differ from synchronous ones ($n of 3 checkpoints equal)"; fi
if grep -q '^checkpoint: step 8 saved to .* (asynchronously; training blocked ' "$work/async.log" &&
  grep -q '^checkpoint: 4 asynchronous saves, training blocked .* ms per save' "$work/async.log"; then
  ok "the log says: $(grep -m1 'asynchronous saves' "$work/async.log")"
else bad "no asynchronous save lines in the log"; fi
train "$work/async" --train.steps=12 --checkpoint.async=true --resume auto || bad "resume of the asynchronous run"
train "$work/sync12" --train.steps=12 || bad "synchronous 12 steps"
if same_tensors "$work/sync12/checkpoints/step_00000012.h5" "$work/async/checkpoints/step_00000012.h5"; then
  ok "resume from an asynchronous checkpoint: bit for bit the uninterrupted run at step 12"
else bad "resume from an asynchronous checkpoint differs"; fi

# 2a. Killed inside the background write of the step-4 save, after a random
#     number of its tensor datasets (0 to all of them).
datasets=$("$py" -c '
import h5py, sys
n = []
h5py.File(sys.argv[1], "r").visititems(lambda k, o: n.append(k) if isinstance(o, h5py.Dataset) and not k.startswith("state") else None)
print(len(n))' "$work/sync/checkpoints/step_00000008.h5")
for _ in 1 2 3; do
  after=$((RANDOM % (datasets + 1))) victim=$((RANDOM % 2))
  out="$work/fault_$after"
  rm -rf "$out"
  train "$out" --train.steps=8 --checkpoint.async=true --checkpoint.fault_kill_rank=$victim \
    --checkpoint.fault_kill_step=4 --checkpoint.fault_kill_after=$after
  rc=$?
  if [[ $rc -ne 0 ]] && grep -q 'checkpoint fault injection: SIGKILL' "$out.log" &&
    [[ $(cat "$out/checkpoints/latest") == step_00000002.h5 ]] && verifies_latest "$out" &&
    train "$out" --train.steps=8 --checkpoint.async=true --resume auto && grep -q 'resume: step 2' "$out.log" &&
    same_tensors "$work/sync/checkpoints/step_00000008.h5" "$out/checkpoints/step_00000008.h5"; then
    ok "rank $victim killed after $after datasets of an asynchronous write: step 2 stays latest, resumed to step 8 bit for bit"
  else
    bad "kill after $after datasets (rank $victim): rc=$rc latest=$(cat "$out/checkpoints/latest" 2> /dev/null)"
    tail -3 "$out.log"
  fi
done

# 2b. kill -9 of a rank at random moments of a run that saves every step.
for k in 1 2 3; do
  out="$work/random_$k"
  train "$out" --train.steps=100000 --checkpoint.every=1 --checkpoint.async=true &
  launcher=$!
  for _ in $(seq 300); do grep -q '^step 3/' "$out.log" 2> /dev/null && break; sleep 0.1; done
  sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
  mapfile -t pids < <(pgrep -f -- "^$ZEROPP train .*--train.out_dir=$out( |\$)")
  ((${#pids[@]})) && kill -KILL "${pids[RANDOM % ${#pids[@]}]}"
  wait "$launcher"
  if verifies_latest "$out" &&
    train "$out" --train.steps="$(($(cat "$out/checkpoints/latest" | sed 's/step_0*//; s/.h5//') + 1))" \
      --checkpoint.every=1 --checkpoint.async=true --resume auto; then
    ok "kill -9 at a random moment: latest ($(cat "$out/checkpoints/latest")) verifies and resumes"
  else
    bad "kill -9 at a random moment: latest=$(cat "$out/checkpoints/latest" 2> /dev/null)"
    tail -3 "$out.log"
  fi
done

# 3. A bad value: one line, and the previous run's files as they were.
before=$(cd "$work/async" && find . -type f -exec md5sum {} + | sort)
train "$work/async" --train.steps=14 --checkpoint.async=maybe --resume auto
rc=$?
after=$(cd "$work/async" && find . -type f -exec md5sum {} + | sort)
if [[ $rc -ne 0 && $rc -ne 124 && $(grep -c 'zeropp: error' "$work/async.log") -eq 1 ]] &&
  grep -q "checkpoint.async.*maybe" "$work/async.log" && [[ $before == "$after" ]]; then
  ok "bad value: exit $rc, one line ($(grep 'zeropp: error' "$work/async.log" | cut -c1-90)), nothing changed"
else
  bad "bad value: rc=$rc, folder changed: $([[ $before == "$after" ]] && echo no || echo yes)"
  cat "$work/async.log"
fi
finish
