#!/usr/bin/env bash
# Checkpoints end to end: bit-identical resume on the same layout, resharding
# (4 -> 2, 4 -> 8, 2x2 -> 1x4) within tolerance, a rank killed in the middle
# of a save, a flipped byte caught by `ckpt verify`, a signal-triggered save
# and exit, refused and allowed deck changes, the schedule and data position
# carried across a resume. Losses are compared from metrics.h5 (float64).
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
py=/usr/bin/python3
# A small, fast configuration of the default deck (fp32 communication so that
# resharded runs differ only by summation order).
common=("${tiny[@]}" --log.every=1 --zero.comm_dtype=fp32 --optim.warmup_steps=3
        --data.shuffle=false)  # shuffled windows are B·T long: the 8-rank case halves B
train() {  # train RANKS OUT_DIR ARGS...
  local n=$1 out=$2
  shift 2
  timeout 300 "$MPIEXEC" -n "$n" "$ZEROPP" train inputs/default.toml "${common[@]}" --train.out_dir="$out" "$@" \
    > "$out.log" 2>&1
}
# losses OUT_DIR: "step loss lr" per row of metrics.h5, full precision, into
# OUT_DIR.losses; a reader failure or no rows is a failure of the test.
losses() {
  if "$py" -c '
import h5py, sys
s = h5py.File(sys.argv[1] + "/metrics.h5", "r", locking=False)["steps"][:]
for r in s[s["step"] >= 0]:
    print(int(r["step"]), repr(float(r["loss"])), repr(float(r["lr"])))' "$1" > "$1.losses" && [[ -s "$1.losses" ]]; then
    return 0
  fi
  bad "no losses read from $1/metrics.h5"
  return 1
}
# same_losses A B ROWS: files A and B identical, with at least ROWS rows each (so
# that two empty or truncated files never compare equal).
same_losses() {
  [[ $(wc -l < "$1") -ge $3 && $(wc -l < "$2") -ge $3 ]] && diff -q "$1" "$2" > /dev/null
}

# 1. Uninterrupted reference: 8 steps on 4 ranks as 2 x 2, checkpoints every 4.
train 4 "$work/ref" --zero.ranks_per_node=2 --train.steps=8 --checkpoint.every=4 || { bad "reference run"; cat "$work/ref.log"; }
losses "$work/ref"

# 2. Bit-identical resume on the same layout: stop at 4 (steps=4), resume to 8.
train 4 "$work/same" --zero.ranks_per_node=2 --train.steps=4 --checkpoint.every=4 || bad "first half"
train 4 "$work/same" --zero.ranks_per_node=2 --train.steps=8 --checkpoint.every=4 --resume auto || bad "resume"
if grep -q 'changed since the checkpoint: train.steps: 4 -> 8' "$work/same.log" && grep -q 'resume: step 4' "$work/same.log"; then
  ok "resume reports the allowed change (train.steps) and starts at step 4"
else bad "resume did not report train.steps or did not start at step 4"; fi
losses "$work/same"
if same_losses "$work/ref.losses" "$work/same.losses" 8; then
  ok "same layout: losses and learning rates of steps 4..7 bit-identical to the uninterrupted run"
else bad "same layout: not bit-identical"; diff "$work/ref.losses" "$work/same.losses" | head; fi
if "$py" - "$work/ref/checkpoints/step_00000008.h5" "$work/same/checkpoints/step_00000008.h5" <<'PY'; then
import h5py, sys, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and (n.startswith("model") or n.startswith("optimizer")) else None)
assert len(names) > 0
for n in names:
    assert np.array_equal(a[n][()].view(np.uint32), b[n][()].view(np.uint32)), n
print(len(names), "datasets bitwise equal")
PY
  ok "same layout: final weights and Adam moments bitwise equal"
else bad "same layout: final checkpoints differ"; fi

# 2b. The same with ZeRO++ and qgZ error feedback: its buffers travel in the checkpoint.
zpp=(--zero.ranks_per_node=2 --zero.quantized_weights=true --zero.hpz_partition_size=0
     --zero.quantized_gradients=true --zero.gradient_error_feedback=true --checkpoint.every=4)
train 4 "$work/ef_ref" "${zpp[@]}" --train.steps=8 || bad "ZeRO++ reference run"
train 4 "$work/ef" "${zpp[@]}" --train.steps=4 || bad "ZeRO++ first half"
train 4 "$work/ef" "${zpp[@]}" --train.steps=8 --resume auto || bad "ZeRO++ resume"
losses "$work/ef_ref"
losses "$work/ef"
if same_losses "$work/ef_ref.losses" "$work/ef.losses" 8 && ! grep -q "error feedback restarts" "$work/ef.log"; then
  ok "ZeRO++ with error feedback: resume bit-identical (error-feedback buffers restored)"
else bad "ZeRO++ with error feedback: resume differs"; fi

# 3. Resharding: resume the reference's step-4 checkpoint on other layouts (same global batch).
cmp_tol() {  # cmp_tol NAME OUT_DIR
  if "$py" - "$work/ref.losses" "$2.losses" <<'PY'; then
import sys
ref = {int(l.split()[0]): float(l.split()[1]) for l in open(sys.argv[1])}
got = {int(l.split()[0]): float(l.split()[1]) for l in open(sys.argv[2])}
steps = [s for s in got if s > 4]  # metrics.h5 counts steps from 1, as the log
assert steps == [5, 6, 7, 8], steps
worst = max(abs(got[s] - ref[s]) / ref[s] for s in steps)
print("worst relative loss difference %.2e" % worst)
assert worst < 1e-5
PY
    ok "$1: losses within 1e-5 of the uninterrupted run"
  else bad "$1"; fi
}
# ranks, ranks per node, grad_accum, batch: the reference's 4 ranks x 4 sequences each
for layout in "2 1 2 4" "8 4 1 2" "4 4 1 4"; do
  read -r n x a b <<< "$layout"
  out="$work/reshard_${n}_$x"
  train "$n" "$out" --zero.ranks_per_node="$x" --train.grad_accum="$a" --train.batch_size="$b" --train.steps=8 \
    --resume "$work/ref/checkpoints/step_00000004.h5" || { bad "reshard to $n x $x"; tail -3 "$out.log"; continue; }
  grep -q "resharding from P=4 X=2" "$out.log" || bad "reshard to $n x $x not reported"
  losses "$out"
  cmp_tol "reshard 2x2 -> P=$n X=$x" "$out"
done

# 4. A rank killed in the middle of the save at step 4: the step-2 checkpoint stays loadable.
train 4 "$work/kill" --zero.ranks_per_node=2 --train.steps=8 --checkpoint.every=2 \
  --checkpoint.fault_kill_rank=1 --checkpoint.fault_kill_step=4 --checkpoint.fault_kill_after=3
rc=$?
latest=$(cat "$work/kill/checkpoints/latest" 2> /dev/null)
if [[ $rc -ne 0 && $latest == step_00000002.h5 ]] && "$ZEROPP" ckpt verify "$work/kill/checkpoints/$latest" > /dev/null; then
  ok "kill -9 during a save: exit $rc, latest is still step 2 and verifies"
else bad "kill during save: rc=$rc latest=$latest"; fi
train 4 "$work/kill" --zero.ranks_per_node=2 --train.steps=8 --checkpoint.every=2 --resume auto || bad "resume after kill"
if grep -q 'resume: step 2' "$work/kill.log"; then
  losses "$work/kill"
  sed -n '3,$p' "$work/ref.losses" > "$work/ref_3_8.losses"
  grep -E '^[3-8] ' "$work/kill.losses" > "$work/kill_3_8.losses"
  if same_losses "$work/ref_3_8.losses" "$work/kill_3_8.losses" 6; then
    ok "resume after the crash continues from step 2, bit-identical to the uninterrupted run"
  else bad "resume after the crash differs from the reference"; fi
else bad "resume after kill did not start at step 2"; fi

# 5. A flipped byte inside a dataset: verify names it and fails.
ck="$work/ref/checkpoints/step_00000004.h5"
cp "$ck" "$work/flipped.h5" || bad "copy of $ck"
"$py" - "$work/flipped.h5" <<'PY' || bad "could not flip a byte of $work/flipped.h5"
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    off = f["model/h.1.mlp.c_fc.weight"].id.get_offset()
with open(sys.argv[1], "r+b") as g:
    g.seek(off + 1001); b = g.read(1); g.seek(off + 1001); g.write(bytes([b[0] ^ 0x40]))
PY
out=$("$ZEROPP" ckpt verify "$work/flipped.h5" 2>&1); rc=$?
info=$("$ZEROPP" ckpt info "$work/flipped.h5" 2> /dev/null)  # exits 1 too: the file is bad
if [[ $rc -ne 0 ]] && grep -q "1 of .* datasets fail" <<< "$out" && grep -q "/model/h.1.mlp.c_fc.weight .*BAD" <<< "$info"; then
  ok "flipped byte: ckpt verify fails, ckpt info marks /model/h.1.mlp.c_fc.weight BAD"
else bad "flipped byte not detected: $out"; fi
out=$(timeout 120 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${common[@]}" --train.out_dir="$work/flip" \
  --train.steps=8 --resume "$work/flipped.h5" 2>&1); rc=$?
if [[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "zeropp: error:.*h.1.mlp.c_fc.weight" <<< "$out"; then
  ok "resuming the corrupted file: one clear error"
else bad "resume of a corrupted file: rc=$rc"; fi
echo "not a checkpoint" > "$work/foreign.h5"
if ! "$ZEROPP" ckpt verify "$work/foreign.h5" > /dev/null 2>&1; then ok "foreign file refused"; else bad "foreign file accepted"; fi

# 6. Refused change: another model shape.
out=$(timeout 120 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${common[@]}" --model.n_embd=32 \
  --train.out_dir="$work/refuse" --train.steps=8 --resume "$ck" 2>&1); rc=$?
if [[ $rc -ne 0 ]] && grep -q "zeropp: error: resume:.*refusing to resume a different model" <<< "$out"; then
  ok "a different model shape is refused"
else bad "model change not refused: $out"; fi

# 7. SIGUSR1 (Slurm) and SIGTERM (PBS): save at the next step boundary, exit with status 3.
# The signal goes to the ranks only (the launcher's own handling varies).
for sig in USR1 TERM; do
  out="$work/sig_$sig"
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${common[@]}" --train.out_dir="$out" \
    --train.steps=100000 > "$out.log" 2>&1 &
  launcher=$!
  for _ in $(seq 150); do grep -q '^step 3/' "$out.log" 2> /dev/null && break; sleep 0.2; done
  pids=$(pgrep -f -- "^$ZEROPP train .*--train.out_dir=$out( |\$)")
  # shellcheck disable=SC2086
  [[ -n $pids ]] && kill -"$sig" $pids
  wait "$launcher"; rc=$?
  if [[ $rc -eq 3 ]] && grep -q 'stopping at step .*(signal)' "$out.log" && [[ -s "$out/checkpoints/latest" ]]; then
    ok "SIG$sig: checkpoint saved, exit status 3 ($(grep 'stopping at step' "$out.log"))"
  else bad "SIG$sig: rc=$rc, ranks signalled: ${pids:-none}"; tail -3 "$out.log"; fi
done

# 8. train.max_runtime stops before the limit the same way.
train 2 "$work/limit" --train.steps=100000 --train.max_runtime=4
rc=$?
if [[ $rc -eq 3 ]] && grep -q 'stopping at step .*(train.max_runtime)' "$work/limit.log"; then
  ok "train.max_runtime: saved and stopped with status 3"
else bad "max_runtime: rc=$rc"; fi

finish
