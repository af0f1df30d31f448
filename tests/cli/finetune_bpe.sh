#!/usr/bin/env bash
# The fine-tuning workflow end to end (README "Fine-tuning GPT-2-format
# weights on your text"), with nothing downloaded: `tokenizer train` on KJV
# text, `prepare-data --tokenizer` into llm.c shards, a GPT-2-shaped model
# written by PyTorch as Hugging Face safetensors (tests/torch/gpt2_safetensors.py,
# random weights, the tokenizer's vocabulary), `ckpt import`, then
# `train --init-from` on the shards (a glob) on 2 ranks: it starts from the
# imported weights (step 0's validation loss is theirs) and lowers the
# validation loss. About 40 s.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${ZEROPP:?}" "${ZEROPP_SOURCE_DIR:?}" "${MPIEXEC:=mpiexec}"
needs_corpus
head -c 400000 data/kjv/kjv.txt > "$work/kjv.txt"
one() { timeout 300 "$MPIEXEC" -n 1 "$ZEROPP" "$@"; }

one tokenizer train --vocab-size 512 --out "$work/bpe" "$work/kjv.txt" > "$work/tok.log" 2>&1 ||
  { bad "tokenizer train"; cat "$work/tok.log"; }
one prepare-data --tokenizer "$work/bpe" --input "$work/kjv.txt" --out-dir "$work/shards" --val-tokens 8192 \
  --shard-tokens 40000 > "$work/prep.log" 2>&1 || { bad "prepare-data"; cat "$work/prep.log"; }
/usr/bin/python3 tests/torch/gpt2_safetensors.py "$work/hf" --V 512 --maxT 64 --L 2 --H 4 --C 64 > /dev/null ||
  bad "PyTorch GPT-2 safetensors"
one ckpt import "$work/hf" "$work/gpt2.h5" > "$work/imp.log" 2>&1 || { bad "ckpt import"; cat "$work/imp.log"; }

# train STEPS OUT: fine-tunes the import on the shards on 2 ranks; the log in OUT.log
train() {
  timeout 300 "$MPIEXEC" -n 2 "$ZEROPP" train inputs/default.toml --model.vocab_size=512 --model.n_layer=2 \
    --model.n_head=4 --model.n_embd=64 --model.max_seq_len=64 --train.seq_len=64 --train.batch_size=8 \
    --optim.lr=3e-3 --optim.warmup_steps=0 --train.sample_tokens=0 --train.val_batches=4 --train.steps="$1" \
    --data.train="$work/shards/train_*.bin" --data.val="$work/shards/val_000000.bin" \
    --train.out_dir="$work/$2" --init-from "$work/gpt2.h5" > "$work/$2.log" 2>&1
}
train 0 ft0
train 40 ft
start=$(sed -n 's/^val final | step 0 | loss //p' "$work/ft0.log")
end=$(sed -n 's/^val final | step 40 | loss //p' "$work/ft.log")
if [[ -n $start && -n $end ]] && grep -q "^init-from: model weights from $work/gpt2.h5" "$work/ft.log" &&
  /usr/bin/python3 -c "import sys; sys.exit(not float('$end') < float('$start') - 0.5)"; then
  ok "fine-tuning the imported GPT-2 on BPE shards: val loss $start -> $end after 40 steps"
else
  bad "fine-tuning: val loss '$start' -> '$end'"
  grep -E "error|init|val" "$work/ft0.log" "$work/ft.log"
fi
finish
