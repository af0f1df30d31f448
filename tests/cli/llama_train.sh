#!/usr/bin/env bash
# The second model family end to end: `train --model.family=llama` on two
# ranks (a tiny model, 20 steps, ~10 s): the loss falls, the start-up table
# names the family, a checkpoint resumes, and a GPT-2 deck refuses it with
# what differs; an unknown family is one clear error.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
common=("${tiny[@]}" --log.every=5 --optim.warmup_steps=2 --checkpoint.every=10)
run() {  # run STEPS OUT_DIR ARGS...
  local steps=$1 out=$2
  shift 2
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml "${common[@]}" --train.steps="$steps" \
    --train.out_dir="$out" "$@" 2>&1
}
loss_of() { grep "^step $1/" <<< "$2" | sed -E 's/.*\| loss ([0-9.]+) .*/\1/'; }

out=$(run 20 "$work/llama" --model.family=llama --model.ffn_hidden=96); rc=$?
first=$(loss_of 5 "$out") last=$(loss_of 20 "$out")
if [[ $rc -eq 0 ]] && awk -v f="$first" -v l="$last" 'BEGIN { exit !(f > 0 && l < f - 0.3) }'; then
  ok "llama trains on 2 ranks: loss $first at step 5 -> $last at step 20"
else bad "llama run: rc=$rc, loss $first -> $last: $out"; fi
if grep -q "model.*llama L=2" <<< "$out"; then ok "the start-up table names the family"
else bad "no 'llama' in the start-up table"; fi

out=$(run 25 "$work/llama" --model.family=llama --model.ffn_hidden=96 --resume auto); rc=$?
if [[ $rc -eq 0 ]] && grep -q "resume: step 20" <<< "$out" && grep -q "^step 25/" <<< "$out"; then
  ok "a llama checkpoint resumes"
else bad "llama resume: rc=$rc: $out"; fi

out=$(run 25 "$work/gpt2" --resume "$work/llama/checkpoints/step_00000020.h5"); rc=$?
if [[ $rc -ne 0 ]] && grep -q "zeropp: error: resume:.*family: llama -> gpt2.*refusing to resume a different model" <<< "$out"
then ok "a GPT-2 deck refuses the llama checkpoint, naming the family"
else bad "GPT-2 resume of a llama checkpoint: rc=$rc: $out"; fi

out=$(run 5 "$work/bert" --model.family=bert); rc=$?
if [[ $rc -eq 1 ]] && [[ $(grep -c "zeropp: error:" <<< "$out") -eq 1 ]] && grep -q "model.family" <<< "$out"; then
  ok "an unknown family: one error naming model.family"
else bad "unknown family: rc=$rc: $out"; fi
finish
