#!/usr/bin/env bash
# `zeropp rlhf` end to end on a tiny model (~30 s on 2 cores): a short
# pretraining run gives the start; 4 iterations on 2 ranks print the
# per-iteration columns (reward, KL, the gather/generate/train/other
# breakdown, samples/s) and write them to metrics.h5's /rlhf; the KL starts
# near 0 (the reference is the same weights, int8-gathered); a run stopped at
# iteration 2 and resumed reproduces iterations 3 and 4 exactly; SIGTERM and
# train.max_runtime stop it at an iteration boundary with a checkpoint and
# exit 3, as they stop `zeropp train`; the memory check counts the rollouts'
# KV cache and the reference; bad input is one clear error.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
model=(--model.n_layer=2 --model.n_embd=64 --model.max_seq_len=64)
timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${tiny[@]}" --train.steps=30 --log.every=10 \
  --train.out_dir="$work/pre" > "$work/pre.log" 2>&1 || bad "pretraining: $(cat "$work/pre.log")"
start=$work/pre/checkpoints/step_00000030.h5
rlhf() {  # rlhf OUT_DIR ARGS...
  local out=$1
  shift
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" rlhf inputs/rlhf.toml "${model[@]}" --rlhf.init_from="$start" \
    --rlhf.batch_size=4 --rlhf.prompt_len=16 --rlhf.completion_len=16 --rlhf.reward_word=e --log.every=1 \
    --checkpoint.every=2 --train.out_dir="$out" "$@" 2>&1
}
col() { grep "^iter $1/" <<< "$3" | sed -E "s/.*\| $2 ([-0-9.e+]+) .*/\1/"; }  # col ITER NAME OUTPUT

out=$(rlhf "$work/a" --rlhf.iterations=4); rc=$?
line='^iter 4/4 \| reward [0-9.]+ \| kl -?[0-9.]+ \| pg loss -?[0-9.]+ \| norm [0-9.]+ \| gather [0-9.]+ s \| generate [0-9.]+ s \| train [0-9.]+ s \| other -?[0-9.]+ s \| [0-9.]+ samples/s'
if [[ $rc -eq 0 ]] && grep -Eq "$line" <<< "$out" && grep -q "reference.*int8" <<< "$out"; then
  ok "4 iterations on 2 ranks log reward, KL, the time breakdown and samples/s"
else bad "rlhf run: rc=$rc: $out"; fi
if grep -Eq '^  memory per rank +: .*KV cache and decode [0-9.]+ [KM]iB, rlhf reference [0-9.]+ [KM]iB\); node offers' <<< "$out"; then
  ok "the memory line counts the rollouts and the reference: $(grep -o 'KV cache.*; node' <<< "$out")"
else bad "rlhf memory line: $(grep 'memory per rank' <<< "$out")"; fi
kl1=$(col 1 kl "$out")
if awk -v k="$kl1" 'BEGIN { exit !(k > -0.02 && k < 0.02) }'; then ok "KL at the first iteration is near 0 ($kl1)"
else bad "KL at iteration 1: '$kl1'"; fi
rows=$(/usr/bin/python3 -c '
import h5py, sys
r = h5py.File(sys.argv[1], "r", locking=False)["rlhf"][:]
print(" ".join(str(int(s)) for s in r["step"]), int((r["generate_s"] > 0).all() and (r["samples_per_s"] > 0).all()))' \
  "$work/a/metrics.h5" 2>&1)
if [[ $rows == "1 2 3 4 1" ]]; then ok "metrics.h5 /rlhf holds iterations 1..4 with times"
else bad "metrics.h5 /rlhf: $rows"; fi

rlhf "$work/b" --rlhf.iterations=2 > /dev/null
out_b=$(rlhf "$work/b" --rlhf.iterations=4 --resume auto); rc=$?
same=1
for i in 3 4; do
  for c in reward kl "pg loss" norm; do
    v=$(col $i "$c" "$out")
    [[ $v =~ ^-?[0-9.]+$ && $v == $(col $i "$c" "$out_b") ]] || same=0
  done
done
if [[ $rc -eq 0 ]] && grep -q "resume: step 2" <<< "$out_b" && ((same)); then
  ok "resumed at iteration 2, iterations 3 and 4 are the uninterrupted run's"
else bad "resume: rc=$rc same=$same: $out_b"; fi

# SIGTERM to the ranks (as a batch system sends it): the next iteration boundary stops.
rlhf "$work/sig" --rlhf.iterations=100000 > "$work/sig.log" &
launcher=$!
for _ in $(seq 600); do grep -q '^iter 2/' "$work/sig.log" 2> /dev/null && break; sleep 0.2; done
pkill -TERM -f -- "^$ZEROPP rlhf .*--train.out_dir=$work/sig( |\$)"
wait "$launcher"
rc=$?
latest=$(cat "$work/sig/checkpoints/latest" 2> /dev/null)
if [[ $rc -eq 3 ]] && grep -q 'stopping at iteration [0-9]* (signal); resume with --resume auto' "$work/sig.log" &&
  [[ -n $latest ]] && "$ZEROPP" ckpt verify "$work/sig/checkpoints/$latest" > /dev/null; then
  ok "SIGTERM: exit 3 at an iteration boundary, $latest saved and verifies"
else bad "SIGTERM: rc=$rc latest=${latest:-none}: $(tail -3 "$work/sig.log")"; fi
out=$(rlhf "$work/time" --rlhf.iterations=100000 --train.max_runtime=3); rc=$?
latest=$(cat "$work/time/checkpoints/latest" 2> /dev/null)
if [[ $rc -eq 3 ]] && grep -q 'stopping at iteration [0-9]* (train.max_runtime)' <<< "$out" && [[ -n $latest ]]; then
  ok "train.max_runtime = 3 s: exit 3 with $latest saved"
else bad "max_runtime: rc=$rc latest=${latest:-none}: $(tail -3 <<< "$out")"; fi

out=$(rlhf "$work/c" --rlhf.completion_len=60); rc=$?
if [[ $rc -eq 1 ]] && [[ $(grep -c "zeropp: error:" <<< "$out") -eq 1 ]] && grep -q "rlhf.completion_len" <<< "$out"; then
  ok "a completion longer than the position table: one error naming rlhf.completion_len"
else bad "too long a completion: rc=$rc: $out"; fi
out=$(ZEROPP_MEMORY_AVAILABLE=200K rlhf "$work/m"); rc=$?
if [[ $rc -eq 1 && $(grep -c "zeropp: error:" <<< "$out") -eq 1 && ! -e $work/m ]] &&
  grep -q "zeropp: error: memory: each rank needs .*rlhf reference .*rlhf.batch_size" <<< "$out"; then
  ok "a node offering 200 KiB: one error counting the reference, nothing written"
else bad "rlhf memory refusal: rc=$rc: $out"; fi
out=$(rlhf "$work/d" --rlhf.init_from="$work/none.h5"); rc=$?
if [[ $rc -eq 1 ]] && grep -q "zeropp: error:.*none.h5" <<< "$out" && [[ ! -e $work/d/metrics.h5 ]]; then
  ok "a missing init_from checkpoint: an error naming it, nothing written"
else bad "missing init_from: rc=$rc: $out"; fi
finish
