#!/usr/bin/env bash
# ZeRO++ resumes end to end, 4 ranks as 2 nodes x 2:
#  1. with validation after every step, every combination of qwZ, hpZ and qgZ
#     (with error feedback) resumes bit-identically: losses, gradient norms,
#     bytes per collective kind and link, and validation losses of the resumed
#     steps equal the uninterrupted run's (validation must not change training);
#  2. with qgZ error feedback, changing the qwZ settings that change the unit
#     padding (quantized_weights, weight_block) is reported and error feedback
#     restarts from zero; changing one that does not (weight_bits) keeps it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
cd "$ZEROPP_SOURCE_DIR"
[[ -s data/kjv/val.bin ]] || { echo "data/kjv/val.bin missing: run scripts/prepare-corpus"; exit 1; }
py=/usr/bin/python3
# Tiny and fast; small blocks so that the padding to P·block stays small.
common=(--model.n_layer=1 --model.n_embd=32 --model.n_head=2 --model.max_seq_len=32 --train.batch_size=2
        --train.seq_len=32 --train.sample_tokens=0 --train.val_every=1 --train.val_batches=1 --log.every=1
        --optim.warmup_steps=2 --zero.ranks_per_node=2 --zero.weight_block=32 --zero.gradient_block=32)
train() {  # train OUT_DIR ARGS...
  local out=$1
  shift
  timeout 300 "$MPIEXEC" -n 4 "$ZEROPP" train inputs/default.toml "${common[@]}" --train.out_dir="$out" "$@" \
    < /dev/null > "$out.log" 2>&1
}
# steps OUT_DIR: per row of metrics.h5 the step, loss, gradient norm and every
# byte count summed over ranks, full precision
steps() {
  "$py" -c '
import h5py, sys
s = h5py.File(sys.argv[1] + "/metrics.h5", "r", locking=False)["steps"][:]
cols = ["loss", "grad_norm"] + [c for c in s.dtype.names if c.startswith("bytes.") and c.endswith(".sum")]
for r in s[s["step"] >= 2]:
    print(int(r["step"]), " ".join("%s=%r" % (c, float(r[c])) for c in cols))' "$1"
}

# 1. Uninterrupted: 4 steps, validation after each, a checkpoint at step 2.
#    Interrupted: 2 steps, then resumed to 4. Steps 2 and 3 must agree.
for mask in 0 1 2 3 4 5 6 7; do
  z=(--zero.quantized_weights=$(((mask & 1) ? 1 : 0)) --zero.hpz_partition_size=$(((mask & 2) ? 0 : 1))
     --zero.quantized_gradients=$(((mask & 4) ? 1 : 0)) --zero.gradient_error_feedback=$(((mask & 4) ? 1 : 0)))
  name="qwZ=$((mask & 1)) hpZ=$(((mask >> 1) & 1)) qgZ+EF=$(((mask >> 2) & 1))"
  ref="$work/ref$mask" cut="$work/cut$mask"
  if ! train "$ref" "${z[@]}" --train.steps=4 --checkpoint.every=2 || ! train "$cut" "${z[@]}" --train.steps=2 ||
    ! train "$cut" "${z[@]}" --train.steps=4 --resume auto; then
    bad "$name: a run failed"
    tail -3 "$ref.log" "$cut.log"
    continue
  fi
  if [[ $(steps "$ref") == "$(steps "$cut")" && -n $(steps "$ref") ]] &&
    diff -q <(grep -E '^val (step 3|final)' "$ref.log") <(grep -E '^val (step 3|final)' "$cut.log") > /dev/null &&
    ! grep -q "error feedback restarts" "$cut.log"; then
    ok "$name: resume with validation on is bit-identical (losses, norms, bytes, val losses)"
  else
    bad "$name: resume with validation on differs from the uninterrupted run"
    diff <(steps "$ref") <(steps "$cut") | head -4
  fi
done

# 2. Error feedback across changed qwZ settings: 2 steps with qwZ int8,
#    block 64 (the padding: 64 > gradient_block 32), resumed to 3 with:
zpp=(--zero.quantized_gradients=true --zero.gradient_error_feedback=true --zero.hpz_partition_size=0)
train "$work/ef" "${zpp[@]}" --zero.quantized_weights=true --zero.weight_block=64 --train.steps=2 ||
  { bad "error-feedback run"; tail -3 "$work/ef.log"; }
ck="$work/ef/checkpoints/step_00000002.h5"
n=0
# change | expected report of the change | error feedback restarts (1) or is kept (0)
while IFS='|' read -r change report restarts; do
  out="$work/ef_$((++n))"
  # shellcheck disable=SC2086
  if ! train "$out" "${zpp[@]}" --zero.quantized_weights=true --zero.weight_block=64 $change --train.steps=3 \
    --resume "$ck"; then
    bad "resume with $change: refused"
    grep -m1 "zeropp: error" "$out.log"
    continue
  fi
  restarted=0
  grep -q "resume: qgZ error feedback restarts from zero (saved: P=4 X=2 align=64 .*; now: P=4 X=2 " \
    "$out.log" && restarted=1
  if grep -q "resume: changed since the checkpoint: $report" "$out.log" && [[ $restarted == "$restarts" ]] &&
    grep -q '^step 3/3' "$out.log"; then
    ok "resume with $change: reported, error feedback $( ((restarts)) && echo restarts from zero || echo kept)"
  else bad "resume with $change: report or error-feedback handling wrong (restarted=$restarted)"; fi
done << 'EOF'
--zero.weight_block=128|zero.weight_block: 64 -> 128|1
--zero.quantized_weights=false|zero.quantized_weights: true -> false|1
--zero.weight_bits=4|zero.weight_bits: 8 -> 4|0
EOF

finish
