#!/usr/bin/env bash
# `zeropp generate` and `zeropp eval` (README "Generating and evaluating") on a
# checkpoint of a short tiny run: greedy text is the same on 1 and 2 ranks (and
# with hpZ), sampling with a seed is the same on 1 and 2 ranks, batched prompts
# give what each gives alone, --ids prints max-new-tokens ids, a BPE tokenizer
# (--tokenizer or the run folder's tokenizer/) is used; eval reproduces the
# run's final validation loss on the same windows; every bad input is one
# clear line and exit status 1, a run that would not fit in the node's memory
# too.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
mp() { timeout 300 "$MPIEXEC" -n "$1" "$ZEROPP" "${@:2}"; }
mp 2 train inputs/default.toml "${tiny[@]}" --data.val=data/kjv/val.bin --train.val_batches=2 --train.steps=6 \
  --checkpoint.every=6 --train.out_dir="$work/run" > "$work/log" 2>&1 || { bad "training run"; cat "$work/log"; }
run="$work/run"

g=(generate "$run" --prompt "And God said" --prompt "In the beginning" --temperature 0 --max-new-tokens 24)
mp 1 "${g[@]}" > "$work/g1" 2> "$work/e1"
mp 2 "${g[@]}" > "$work/g2" 2> "$work/e2"
mp 2 "${g[@]}" --zero.hpz_partition_size=2 --zero.ranks_per_node=2 > "$work/g2h" 2> /dev/null
if [[ $(wc -l < "$work/g1") -eq 2 ]] && head -1 "$work/g1" | grep -q "^And God said" &&
  cmp -s "$work/g1" "$work/g2" && cmp -s "$work/g1" "$work/g2h" && grep -q "on P=2 .*byte-level" "$work/e2"; then
  ok "greedy: the same text on 1 rank, 2 ranks and 2 ranks with hpZ"
else bad "greedy across ranks"; cat "$work/g1" "$work/g2" "$work/g2h" "$work/e1"; fi
s=(generate "$run" --prompt "And God said" --max-new-tokens 30 --temperature 0.9 --top-k 20 --top-p 0.95 --seed 7)
if mp 1 "${s[@]}" > "$work/s1" 2> /dev/null && mp 2 "${s[@]}" > "$work/s2" 2> /dev/null && cmp -s "$work/s1" "$work/s2"; then
  ok "sampling with a seed: the same text on 1 and 2 ranks"
else bad "sampling across ranks"; cat "$work/s1" "$work/s2"; fi

printf 'And God said\n\nIn the beginning\nLet there\n' > "$work/prompts"
if mp 2 generate "$run" --prompt-file "$work/prompts" --batch 2 --temperature 0 --max-new-tokens 24 > "$work/b" 2> /dev/null &&
  mp 1 generate "$run" --prompt "Let there" --temperature 0 --max-new-tokens 24 > "$work/b3" 2> /dev/null &&
  [[ $(wc -l < "$work/b") -eq 3 ]] && cmp -s <(head -2 "$work/b") "$work/g1" && cmp -s <(tail -1 "$work/b") "$work/b3"; then
  ok "--prompt-file in batches of 2: each prompt's text as alone"
else bad "batched prompts"; cat "$work/b" "$work/b3"; fi
if mp 1 generate "$run" --prompt "In the" --temperature 0 --max-new-tokens 9 --ids > "$work/ids" 2> /dev/null &&
  [[ $(wc -w < "$work/ids") -eq 9 ]] && grep -Eq '^[0-9]+( [0-9]+){8}$' "$work/ids"; then
  ok "--ids: 9 token ids"
else bad "--ids"; cat "$work/ids"; fi

# BPE: a vocabulary of 300 tokens trained on the corpus; a run whose model has them.
"$ZEROPP" tokenizer train --vocab-size 300 --out "$work/tok" data/kjv/kjv.txt > /dev/null 2>&1 || bad "tokenizer train"
mp 1 train inputs/default.toml "${tiny[@]}" --model.vocab_size=320 --train.steps=2 --checkpoint.every=2 \
  --train.out_dir="$work/bperun" > /dev/null 2>&1 || bad "BPE-sized run"
if mp 1 generate "$work/bperun" --tokenizer "$work/tok" --prompt "And God said" --max-new-tokens 5 --temperature 0 \
  > "$work/bpe" 2> "$work/bpe_err" && grep -q "BPE tokens" "$work/bpe_err" && grep -q "^And God said" "$work/bpe" &&
  cp -r "$work/tok" "$work/bperun/tokenizer" &&
  mp 1 generate "$work/bperun" --prompt "And God said" --max-new-tokens 5 --temperature 0 > "$work/bpe2" 2> "$work/bpe2_err" &&
  grep -q "BPE tokens" "$work/bpe2_err" && cmp -s "$work/bpe" "$work/bpe2"; then
  ok "BPE tokenizer from --tokenizer and from the run folder's tokenizer/"
else bad "BPE tokenizer"; cat "$work/bpe" "$work/bpe_err"; fi

val=$(sed -n 's/^val final | step 6 | loss //p' "$work/log")
if mp 2 eval "$run" --data data/kjv/val.bin --max-batches 2 > "$work/ev" 2>&1 &&
  grep -Eq "^eval: loss $val[0-9]* \| perplexity [0-9.]+ \|" "$work/ev"; then
  ok "eval --max-batches 2 on 2 ranks: the run's final validation loss $val"
else bad "eval"; cat "$work/ev"; echo "val final: $val"; fi

# Bad input: one line "zeropp: error: ...", exit status 1.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  "$ZEROPP" "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  if [[ $rc -eq 1 && $(wc -l < "$work/err") -eq 1 ]] && grep -q "^zeropp: error: .*$pattern" "$work/err"; then
    ok "$what: $(cat "$work/err")"
  else bad "$what (exit $rc)"; cat "$work/err"; fi
}
expect_error "missing checkpoint" "$work/none: no such" generate "$work/none" --prompt x
expect_error "missing prompt file" "--prompt-file $work/none.txt: cannot open" generate "$run" --prompt-file "$work/none.txt"
expect_error "no prompt" "no prompt" generate "$run"
expect_error "prompt longer than the context" "more than the model's context of 64" generate "$run" \
  --prompt "$(printf 'a%.0s' {1..70})"
expect_error "negative temperature" "--temperature -1: must be >= 0" generate "$run" --prompt x --temperature -1
expect_error "top-p outside (0,1]" "--top-p 1.5: must be in (0, 1\]" generate "$run" --prompt x --top-p 1.5
expect_error "top-p zero" "--top-p 0: must be in (0, 1\]" generate "$run" --prompt x --top-p 0
expect_error "missing tokenizer" "$work/nodir" generate "$run" --prompt x --tokenizer "$work/nodir"
expect_error "eval: missing data" "$work/none.bin" eval "$run" --data "$work/none.bin"
expect_error "eval: bad deck override" "zero.nonsense" eval "$run" --data data/kjv/val.bin --zero.nonsense=1
expect_error "generate on cuda" 'train.device = "cuda": zeropp generate/eval runs on the host only' generate "$run" \
  --prompt x --train.device=cuda

# Memory: generate and eval check what they will allocate (a frozen engine: no
# gradients, no optimizer states; the KV cache, the weights' copy) against what
# the node offers before allocating it, as training does.
mp 1 generate "$run" --prompt x --max-new-tokens 2 --zero.inference_weights=full > /dev/null 2> "$work/mem"
mem='^generate: memory per rank .*grad 0 B, adam 0 B, .*KV cache and decode [0-9.]+ [KM]iB, inference weights [0-9.]+ [KM]iB\); node offers'
if grep -Eq "$mem" "$work/mem"; then ok "generate's memory line: $(grep -o 'KV cache.*' "$work/mem")"
else bad "generate's memory line"; cat "$work/mem"; fi
ZEROPP_MEMORY_AVAILABLE=100K expect_error "generate on a node offering 100 KiB" \
  "memory: each rank needs .*KV cache and decode .*100.00 KiB (ZEROPP_MEMORY_AVAILABLE).*a smaller --batch" \
  generate "$run" --prompt x
ZEROPP_MEMORY_AVAILABLE=100K expect_error "eval on a node offering 100 KiB" \
  "memory: each rank needs .*100.00 KiB (ZEROPP_MEMORY_AVAILABLE).*train.batch_size" eval "$run" --data data/kjv/val.bin
finish
